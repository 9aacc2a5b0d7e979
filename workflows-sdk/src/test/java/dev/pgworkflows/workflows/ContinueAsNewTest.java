package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ctx.continueAsNew}: the run ends and its successor starts in one transaction, the held
 * step journaled with them; the runs are linked both ways and listed as a chain; the result follows
 * the chain; the idempotency key moves along it; a worker killed around the continuation makes no
 * second successor.
 */
class ContinueAsNewTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void aLoopOfRunsEndsWithTheLastResultAndEveryRunJournalsOnlyItsOwnStep(@TempDir Path dir) {
    server.serve(RenewingWorkflow.define(dir.resolve("log"), 3, -1, 0));
    WorkflowClient client = server.client();
    Started s =
        client.start(
            "renewing",
            0,
            StartOptions.builder()
                .concurrencyKey("customer-7")
                .priority(4)
                .retentionDays(9)
                .build());

    assertThat(
            client.runs().awaitResult("renewing", s.runId(), String.class, Duration.ofSeconds(60)))
        .isEqualTo("done 3");

    List<RunInfo> chain = client.runs().chain("renewing", s.runId());
    assertThat(chain).hasSize(4);
    assertThat(chain.get(0).runId()).isEqualTo(s.runId());
    for (int i = 0; i < 4; i++) {
      RunInfo run = chain.get(i);
      assertThat(run.input().asInt()).isEqualTo(i);
      assertThat(run.status()).isEqualTo(RunStatus.COMPLETED);
      assertThat(run.concurrencyKey()).isEqualTo("customer-7");
      assertThat(run.priority()).isEqualTo(4);
      assertThat(run.retentionDays()).isEqualTo(9);
      assertThat(run.continuedFrom()).isEqualTo(i == 0 ? null : chain.get(i - 1).runId());
      assertThat(run.continuedTo()).isEqualTo(i == 3 ? null : chain.get(i + 1).runId());
      assertThat(client.runs().steps("renewing", run.runId()))
          .extracting(StepInfo::name)
          .containsExactly("charge");
    }
    // The run's own view: its output names the successor.
    RunInfo first = client.runs().get("renewing", s.runId());
    assertThat(first.output().get("continuedTo").asLong()).isEqualTo(chain.get(1).runId());
    assertThat(client.runs().chain("renewing", chain.get(2).runId()))
        .extracting(RunInfo::runId)
        .containsExactlyElementsOf(chain.stream().map(RunInfo::runId).toList());
  }

  @Test
  void theStateARunSetsBeforeContinuingStaysWithItAndTheSuccessorStartsWithNone() {
    Workflow<Integer, String> wf =
        Workflow.define("renew-state", Integer.class, String.class)
            .run(
                (ctx, in) -> {
                  if (in == 0) {
                    ctx.step().run("bill", () -> ctx.state().put("billed", "step"));
                    // Set by the body after the last step: it goes with that step's row.
                    ctx.state().put("renewals", 1);
                    return ctx.continueAsNew(1);
                  }
                  if (in == 1) {
                    // No step at all: the change ends the run in a row of its own.
                    ctx.state().put("renewals", 2);
                    return ctx.continueAsNew(2);
                  }
                  return "seen " + ctx.state().get("renewals", Integer.class);
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started s = client.start("renew-state", 0);

    assertThat(
            client
                .runs()
                .awaitResult("renew-state", s.runId(), String.class, Duration.ofSeconds(60)))
        .isEqualTo("seen null");
    List<RunInfo> chain = client.runs().chain("renew-state", s.runId());
    assertThat(chain).hasSize(3);
    assertThat(client.runs().state("renew-state", chain.get(0).runId()))
        .containsOnlyKeys("billed", "renewals");
    assertThat(client.runs().state("renew-state", chain.get(0).runId()).get("renewals").asInt())
        .isEqualTo(1);
    assertThat(client.runs().state("renew-state", chain.get(1).runId()).get("renewals").asInt())
        .isEqualTo(2);
    assertThat(client.runs().state("renew-state", chain.get(2).runId())).isEmpty();
  }

  @Test
  void continueAsNewInsideAStepIsRefusedWithAClearError() {
    Workflow<Integer, String> wf =
        Workflow.define("renew-in-step", Integer.class, String.class)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "inside",
                            String.class,
                            () -> {
                              try {
                                ctx.continueAsNew(in + 1);
                                return "continued";
                              } catch (IllegalStateException e) {
                                return e.getMessage();
                              }
                            }));
    server.serve(wf);
    Started s = server.client().start("renew-in-step", 1);
    String message =
        server
            .client()
            .runs()
            .awaitResult("renew-in-step", s.runId(), String.class, Duration.ofSeconds(30));
    assertThat(message)
        .isEqualTo("continueAsNew was called inside a step; call it from the workflow body");
    assertThat(server.client().runs().get("renew-in-step", s.runId()).continuedTo()).isNull();
  }

  @Test
  void theSuccessorTakesTheNewestVersionServedAsANewStartWould() {
    Workflow<Integer, String> v1 =
        Workflow.define("renew-versions", Integer.class, String.class)
            .version(1)
            .run(
                (ctx, in) -> {
                  ctx.step().waitForEvent("go", String.class, Match.any(), Duration.ofMinutes(1));
                  return ctx.continueAsNew(in + 1);
                });
    Workflow<Integer, String> v2 =
        Workflow.define("renew-versions", Integer.class, String.class)
            .version(2)
            .run((ctx, in) -> "v2 got " + in);
    WorkflowClient client = server.client();
    server.serve(v1);
    Started s = client.start("renew-versions", 1);
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> client.runs().get("renew-versions", s.runId()).waitingFor() != null);
    server.serve(v2);
    // A start after v2's worker registered takes v2: so does the continuation.
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () ->
                client
                        .runs()
                        .get("renew-versions", client.start("renew-versions", 0).runId())
                        .version()
                    == 2);
    client.signal("renew-versions", s.runId(), "go", "now");

    assertThat(
            client
                .runs()
                .awaitResult("renew-versions", s.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("v2 got 2");
    RunInfo successor =
        client
            .runs()
            .get("renew-versions", client.runs().get("renew-versions", s.runId()).continuedTo());
    assertThat(successor.version()).isEqualTo(2);
    assertThat(client.runs().get("renew-versions", s.runId()).version()).isEqualTo(1);
  }

  @Test
  void aRepeatedStartWithTheChainsKeyFindsItsNewestRun(@TempDir Path dir) {
    server.serve(RenewingWorkflow.define(dir.resolve("log"), 2, -1, 0));
    WorkflowClient client = server.client();
    Started s =
        client.start(
            "renewing", 0, StartOptions.builder().idempotencyKey("subscription-9").build());
    client.runs().awaitResult("renewing", s.runId(), String.class, Duration.ofSeconds(60));
    List<RunInfo> chain = client.runs().chain("renewing", s.runId());
    assertThat(chain).hasSize(3);

    Started again =
        client.start(
            "renewing", 0, StartOptions.builder().idempotencyKey("subscription-9").build());
    assertThat(again.created()).isFalse();
    assertThat(again.runId()).isEqualTo(chain.get(2).runId());
    assertThat(chain)
        .extracting(RunInfo::idempotencyKey)
        .containsExactly(null, null, "subscription-9");
  }

  @Test
  void awaitingAChainThatGoesOnTimesOutOnTimeNamingTheRunAskedForAndTheChainsCurrentRun() {
    Workflow<Integer, String> wf =
        Workflow.define("renew-await", Integer.class, String.class)
            .run(
                (ctx, in) -> {
                  if (in < 2) {
                    return ctx.continueAsNew(in + 1);
                  }
                  return ctx.step()
                      .waitForEvent("never", String.class, Match.any(), Duration.ofMinutes(5))
                      .orElse("none");
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    long first = client.start("renew-await", 0).runId();
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> client.runs().chain("renew-await", first).size() == 3);
    long last = client.runs().chainLast("renew-await", first).runId();

    long began = System.nanoTime();
    assertThatThrownBy(
            () ->
                client
                    .runs()
                    .awaitResult("renew-await", first, String.class, Duration.ofMillis(700)))
        .isInstanceOf(WorkflowException.class)
        .hasMessageContaining("run " + first + " ")
        .hasMessageContaining("at run " + last);
    assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void aParentWaitingForAChildThatContinuesAsNewGetsTheChainsLastResult(@TempDir Path dir) {
    Workflow<Integer, String> child = RenewingWorkflow.define(dir.resolve("log"), 2, -1, 0);
    Workflow<Integer, String> parent =
        Workflow.define("renew-parent", Integer.class, String.class)
            .run((ctx, in) -> "child says " + ctx.step().startChild("sub", child, in).result());
    server.serve(child);
    server.serve(parent);
    WorkflowClient client = server.client();
    Started s = client.start("renew-parent", 0);

    assertThat(
            client
                .runs()
                .awaitResult("renew-parent", s.runId(), String.class, Duration.ofSeconds(60)))
        .isEqualTo("child says done 2");
    List<RunInfo.Child> children = client.runs().get("renew-parent", s.runId()).children();
    List<RunInfo> chain = client.runs().chain("renewing", children.get(0).runId());
    assertThat(chain).hasSize(3);
    // Every run of the child's chain is the parent's child, each started by the same step.
    assertThat(children)
        .extracting(RunInfo.Child::runId)
        .containsExactlyElementsOf(chain.stream().map(RunInfo::runId).toList());
    assertThat(chain).allSatisfy(r -> assertThat(r.parent().runId()).isEqualTo(s.runId()));
  }

  @Test
  void aWorkerKilledWhileHoldingTheLastStepBeforeContinuingMakesOneSuccessor(@TempDir Path dir)
      throws Exception {
    Path log = dir.resolve("log");
    Process child = worker(log, 3, 1, 0, dir.resolve("child.out"));
    try {
      Started s = server.client().start("renewing", 0);
      // Period 1's charge ran and its completion is held: the body hangs before continuing.
      Awaitility.await()
          .atMost(60, TimeUnit.SECONDS)
          .until(() -> Files.exists(log) && Files.readAllLines(log).size() == 2);
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL
      server.serve(RenewingWorkflow.define(log, 3, -1, 0));
      assertThat(
              server
                  .client()
                  .runs()
                  .awaitResult("renewing", s.runId(), String.class, Duration.ofSeconds(60)))
          .isEqualTo("done 3");

      List<RunInfo> chain = server.client().runs().chain("renewing", s.runId());
      assertThat(chain).extracting(r -> r.input().asInt()).containsExactly(0, 1, 2, 3);
      assertLinear(chain);
      // The held charge was never journaled, so the replay ran it again; then one continuation.
      List<String> lines = Files.readAllLines(log);
      long period1Run = chain.get(1).runId();
      assertThat(lines).filteredOn(l -> l.equals(period1Run + " 1")).hasSize(2);
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void workersKilledAgainAndAgainAlongAChainNeverMakeTwoSuccessors(@TempDir Path dir)
      throws Exception {
    Path log = dir.resolve("log");
    int last = 24;
    Started s = server.client().start("renewing", 0);
    for (int kill = 1; kill <= 3; kill++) {
      int periodsBefore = kill * 6;
      Process child = worker(log, last, -1, 15, dir.resolve("child" + kill + ".out"));
      try {
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .pollInterval(Duration.ofMillis(5))
            .until(() -> Files.exists(log) && Files.readAllLines(log).size() >= periodsBefore);
      } finally {
        child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL, anywhere in a loop
      }
    }
    server.serve(RenewingWorkflow.define(log, last, -1, 0));
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("renewing", s.runId(), String.class, Duration.ofSeconds(90)))
        .isEqualTo("done " + last);

    List<RunInfo> chain = server.client().runs().chain("renewing", s.runId());
    assertThat(chain).extracting(r -> r.input().asInt()).containsExactlyElementsOf(range(last));
    assertLinear(chain);
    try (Connection c = server.database().connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*), count(DISTINCT continued_from) FROM queue.workflow_run"
                    + " WHERE workflow_name = 'renewing' AND continued_from IS NOT NULL")) {
      rs.next();
      assertThat(rs.getLong(1)).isEqualTo(rs.getLong(2)); // no run has two successors
    }
  }

  /** Each run continues into the next and no other; each journals its charge once. */
  private static void assertLinear(List<RunInfo> chain) {
    for (int i = 0; i < chain.size(); i++) {
      RunInfo run = chain.get(i);
      assertThat(run.continuedTo())
          .isEqualTo(i + 1 < chain.size() ? chain.get(i + 1).runId() : null);
      assertThat(run.continuedFrom()).isEqualTo(i > 0 ? chain.get(i - 1).runId() : null);
      assertThat(server.client().runs().steps("renewing", run.runId()))
          .extracting(StepInfo::name)
          .containsExactly("charge");
    }
  }

  private static List<Integer> range(int last) {
    return java.util.stream.IntStream.rangeClosed(0, last).boxed().toList();
  }

  private static Process worker(Path log, int last, int hangAt, long stepMs, Path out)
      throws Exception {
    return WorkerJvm.start(
        RenewingWorkflow.class,
        out,
        server.url(),
        log.toString(),
        Integer.toString(last),
        Integer.toString(hangAt),
        Long.toString(stepMs));
  }
}
