package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.RecordingProxy;
import dev.pgworkflows.workflows.testing.SpecRequests;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parallel steps end to end on a real server: results in declaration order whatever order the
 * branches finish in, each branch journaled once, retries in the branch's own thread, a branch out
 * of attempts failing the group by name after the others were journaled, a replay after a crash
 * that runs only the branches not journaled, names used twice, and a fan-out of 100 branches in a
 * handful of requests that match openapi.yaml.
 */
class ParallelStepsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

  /** A branch that counts its executions, sleeps {@code ms} and returns its name. */
  private Branch<String> counted(String name, long ms) {
    return Branch.of(
        name,
        String.class,
        () -> {
          runs.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
          Thread.sleep(ms);
          return name;
        },
        Retry.none());
  }

  private int executions(String name) {
    AtomicInteger n = runs.get(name);
    return n == null ? 0 : n.get();
  }

  private static List<String> journal(String workflow, long run) {
    return server.client().runs().steps(workflow, run).stream().map(StepInfo::name).toList();
  }

  @Test
  void resultsComeInDeclarationOrderWhenBranchesFinishInReverse() {
    Workflow<String, List<String>> wf =
        Workflow.define("fan-order", TypeRef.of(String.class), new TypeRef<List<String>>() {})
            .run(
                (ctx, in) -> {
                  String before = ctx.step().run("before", String.class, () -> in);
                  List<String> got =
                      ctx.step()
                          .parallel(
                              List.of(
                                  counted("p1", 600),
                                  counted("p2", 450),
                                  counted("p3", 300),
                                  counted("p4", 150),
                                  counted("p5", 0)));
                  List<String> out = new ArrayList<>(got);
                  out.add(ctx.step().run("after", String.class, () -> before + got.size()));
                  return out;
                });
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    List<String> result =
        server.client().runs().awaitResult("fan-order", run, new TypeRef<List<String>>() {}, WAIT);
    assertThat(result).containsExactly("p1", "p2", "p3", "p4", "p5", "x5");
    for (String p : List.of("p1", "p2", "p3", "p4", "p5")) {
      assertThat(executions(p)).as(p).isEqualTo(1);
    }
    List<String> journal = journal("fan-order", run);
    assertThat(journal).hasSize(7).doesNotHaveDuplicates();
    assertThat(journal.get(0)).isEqualTo("before");
    assertThat(journal.subList(1, 6)).containsExactlyInAnyOrder("p1", "p2", "p3", "p4", "p5");
    assertThat(journal.get(6)).isEqualTo("after");
    // Branches are journaled as they finish: the quickest first, the slowest last.
    assertThat(journal.get(1)).isEqualTo("p5");
    assertThat(journal.get(5)).isEqualTo("p1");
  }

  @Test
  void aBranchRetriesInItsOwnThreadWhileTheOthersGoOn() {
    AtomicInteger flaky = new AtomicInteger();
    Workflow<String, List<String>> wf =
        Workflow.define("fan-retry", TypeRef.of(String.class), new TypeRef<List<String>>() {})
            .run(
                (ctx, in) ->
                    ctx.step()
                        .parallel(
                            List.of(
                                Branch.of(
                                    "flaky",
                                    String.class,
                                    () -> {
                                      if (flaky.incrementAndGet() < 3) {
                                        throw new IllegalStateException("not yet");
                                      }
                                      return "third time";
                                    },
                                    Retry.fixed(3, Duration.ofMillis(50))),
                                counted("steady", 0))));
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("fan-retry", run, new TypeRef<List<String>>() {}, WAIT))
        .containsExactly("third time", "steady");
    assertThat(flaky.get()).isEqualTo(3);
    assertThat(executions("steady")).isEqualTo(1);
    List<StepInfo> steps = server.client().runs().steps("fan-retry", run);
    assertThat(steps).extracting(StepInfo::name).containsExactlyInAnyOrder("flaky", "steady");
    // The retries stayed in the thread: the run's task was delivered once.
    assertThat(steps).allSatisfy(s -> assertThat(s.attempts()).isEqualTo(1));
  }

  @Test
  void aBranchOutOfAttemptsFailsTheGroupByNameAndTheOthersStayJournaled() {
    AtomicInteger second = new AtomicInteger();
    AtomicInteger fourth = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("fan-fail", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    ctx.step()
                        .parallel(
                            List.of(
                                counted("first", 0),
                                failing("second", second, 2),
                                counted("third", 50),
                                failing("fourth", fourth, 1)));
                    return "no failure";
                  } catch (StepFailedException e) {
                    return ctx.step()
                        .run("compensate", String.class, () -> e.step() + ":" + e.errorMessage());
                  }
                });
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    assertThat(server.client().runs().awaitResult("fan-fail", run, String.class, WAIT))
        .isEqualTo("second:second failed");
    assertThat(second.get()).isEqualTo(2);
    assertThat(fourth.get()).isEqualTo(1);
    List<StepInfo> steps = server.client().runs().steps("fan-fail", run);
    assertThat(steps)
        .extracting(StepInfo::name)
        .containsExactlyInAnyOrder("first", "second", "third", "fourth", "compensate");
    assertThat(steps)
        .filteredOn(s -> s.name().equals("second") || s.name().equals("fourth"))
        .allSatisfy(s -> assertThat(s.error().get("type").asText()).contains("IllegalState"));
    assertThat(steps)
        .filteredOn(s -> s.name().equals("first") || s.name().equals("third"))
        .allSatisfy(s -> assertThat(s.error() == null || s.error().isNull()).isTrue());
  }

  private static Branch<String> failing(String name, AtomicInteger calls, int attempts) {
    return Branch.of(
        name,
        String.class,
        () -> {
          calls.incrementAndGet();
          throw new IllegalStateException(name + " failed");
        },
        Retry.fixed(attempts, Duration.ofMillis(10)));
  }

  @Test
  void aGroupLeftUncaughtFailsTheRunWithTheBranchsError() {
    Workflow<String, String> wf =
        Workflow.define("fan-uncaught", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step()
                      .parallel(
                          List.of(counted("fine", 0), failing("broken", new AtomicInteger(), 1)));
                  return "unreachable";
                });
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    assertThatThrownBy(
            () -> server.client().runs().awaitResult("fan-uncaught", run, String.class, WAIT))
        .isInstanceOf(WorkflowFailedException.class);
    RunInfo info = server.client().runs().get("fan-uncaught", run);
    assertThat(info.error().get("step").asText()).isEqualTo("broken");
    assertThat(info.error().get("message").asText()).isEqualTo("broken failed");
    assertThat(journal("fan-uncaught", run)).containsExactlyInAnyOrder("fine", "broken");
  }

  @Test
  void aReplayAfterACrashRunsOnlyTheBranchesNotJournaled(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("executions.log");
    Process child =
        WorkerJvm.start(
            FanOutWorkflow.class, dir.resolve("child.out"), server.url(), log.toString());
    try {
      long run = server.client().start(FanOutWorkflow.NAME, "go").runId();
      Awaitility.await()
          .atMost(60, TimeUnit.SECONDS)
          .until(
              () ->
                  Files.exists(log)
                      && Files.readAllLines(log).contains("slow")
                      && journal(FanOutWorkflow.NAME, run).size() == 3);
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL while "slow" runs
      assertThat(server.client().runs().get(FanOutWorkflow.NAME, run).status())
          .isEqualTo(RunStatus.RUNNING);

      Map<String, AtomicInteger> survivor = new ConcurrentHashMap<>();
      server.serve(FanOutWorkflow.define(log, false, survivor));
      assertThat(server.client().runs().awaitResult(FanOutWorkflow.NAME, run, String.class, WAIT))
          .isEqualTo("abcs");
      assertThat(survivor.keySet()).containsExactly("slow");
      assertThat(survivor.get("slow").get()).isEqualTo(1);
      assertThat(Files.readAllLines(log)).containsExactlyInAnyOrder("a", "b", "c", "slow", "slow");
      List<String> journal = journal(FanOutWorkflow.NAME, run);
      assertThat(journal).containsExactlyInAnyOrder("a", "b", "c", "slow");
      assertThat(journal.get(3)).isEqualTo("slow");
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void aBranchNameUsedTwiceIsNotDeterministic() {
    Workflow<String, String> twice =
        Workflow.define("fan-twice", String.class, String.class)
            .run(
                (ctx, in) ->
                    String.join(
                        "", ctx.step().parallel(List.of(counted("same", 0), counted("same", 0)))));
    Workflow<String, String> reused =
        Workflow.define("fan-reused", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("earlier", String.class, () -> "e");
                  return String.join(
                      "", ctx.step().parallel(List.of(counted("other", 0), counted("earlier", 0))));
                });
    server.serve(twice);
    server.serve(reused);
    for (String name : List.of("fan-twice", "fan-reused")) {
      long run = server.client().start(name, "x").runId();
      assertThatThrownBy(() -> server.client().runs().awaitResult(name, run, String.class, WAIT))
          .isInstanceOf(WorkflowFailedException.class);
      RunInfo info = server.client().runs().get(name, run);
      assertThat(info.error().get("type").asText())
          .isEqualTo(NonDeterministicWorkflowException.class.getName());
      assertThat(info.error().get("message").asText()).contains("used twice");
    }
    assertThat(executions("same")).isZero();
    assertThat(executions("other")).isZero();
  }

  @Test
  void codeInABranchMayNotCallSteps() {
    Workflow<String, String> wf =
        Workflow.define("fan-nested", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    ctx.step()
                        .parallel(
                            List.of(
                                Branch.of(
                                    "outer",
                                    String.class,
                                    () -> ctx.step().run("inner", String.class, () -> "no"),
                                    Retry.none()),
                                Branch.of(
                                    "sleeper",
                                    () -> ctx.step().sleep("nap", Duration.ofMillis(1)),
                                    Retry.none())));
                    return "nested";
                  } catch (StepFailedException e) {
                    return e.step() + ":" + e.errorType();
                  }
                });
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    assertThat(server.client().runs().awaitResult("fan-nested", run, String.class, WAIT))
        .isEqualTo("outer:" + IllegalStateException.class.getName());
    List<StepInfo> steps = server.client().runs().steps("fan-nested", run);
    assertThat(steps).extracting(StepInfo::name).containsExactlyInAnyOrder("outer", "sleeper");
    assertThat(steps)
        .allSatisfy(
            s -> assertThat(s.error().get("message").asText()).contains("steps cannot nest"));
  }

  @Test
  void aHundredBranchesAreJournaledInAFewRequestsThatMatchTheSpec() throws Exception {
    int n = 100;
    try (RecordingProxy proxy = new RecordingProxy(server.url())) {
      Workflow<Integer, List<Integer>> wf =
          Workflow.define("fan-hundred", TypeRef.of(Integer.class), new TypeRef<List<Integer>>() {})
              .run(
                  (ctx, in) -> {
                    List<Branch<Integer>> branches = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                      int k = i;
                      branches.add(Branch.of("b" + k, Integer.class, () -> k * in));
                    }
                    return ctx.step().parallel(branches);
                  });
      server.serve(wf, WorkerOptions.url(proxy.url()).pollWait(Duration.ofSeconds(2)));
      long run = server.client().start(wf, 3).runId();
      List<Integer> result =
          server
              .client()
              .runs()
              .awaitResult("fan-hundred", run, new TypeRef<List<Integer>>() {}, WAIT);
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        expected.add(i * 3);
      }
      assertThat(result).isEqualTo(expected);
      List<String> journal = journal("fan-hundred", run);
      assertThat(journal).hasSize(n).doesNotHaveDuplicates();

      List<RecordingProxy.Recorded> writes =
          proxy.requests().stream().filter(r -> r.path().endsWith("/steps")).toList();
      assertThat(writes)
          .as("journal requests for %d branches", n)
          .isNotEmpty()
          .hasSizeLessThanOrEqualTo(20);
      for (RecordingProxy.Recorded r : writes) {
        assertThat(r.method()).isEqualTo("POST");
        assertThat(SpecRequests.route(r)).isEqualTo("POST /v1/workflows/{name}/runs/{runId}/steps");
        assertThat(SpecRequests.violations(r)).as(r.body()).isEmpty();
      }
    }
  }
}
