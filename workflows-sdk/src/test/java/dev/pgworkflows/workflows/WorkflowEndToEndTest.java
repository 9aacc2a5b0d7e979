package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Workflows end to end: SDK worker and client against a live server on a real database. */
class WorkflowEndToEndTest {
  record Signup(String email) {}

  record User(long id, String email) {}

  record Verified(long userId) {}

  @RegisterExtension static final LiveServer server = new LiveServer();

  private Worker serve(Workflow<?, ?> wf) {
    return server.serve(wf);
  }

  private Worker serve(Workflow<?, ?> wf, WorkerOptions options) {
    return server.serve(wf, options);
  }

  private static RunInfo awaitWaiting(String workflow, long runId) {
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> server.client().runs().get(workflow, runId).waitingFor() != null);
    return server.client().runs().get(workflow, runId);
  }

  @Test
  void onboardingWithSleepAndSignal() {
    AtomicInteger created = new AtomicInteger();
    List<String> mails = new java.util.concurrent.CopyOnWriteArrayList<>();
    Workflow<Signup, Long> onboard =
        Workflow.define("onboard-user", Signup.class, Long.class)
            .version(1)
            .retention(Duration.ofDays(30))
            .run(
                (ctx, in) -> {
                  User u =
                      ctx.step()
                          .run(
                              "create-user",
                              User.class,
                              () -> new User(1000 + created.incrementAndGet(), in.email()));
                  ctx.step().sleep("welcome-delay", Duration.ofMillis(300));
                  ctx.step()
                      .run(
                          "send-welcome",
                          () -> mails.add("welcome " + u.email()),
                          Retry.exponential(5, Duration.ofMillis(10)));
                  Optional<Verified> v =
                      ctx.step()
                          .waitForEvent(
                              "verify",
                              Verified.class,
                              Match.of("userId", u.id()),
                              Duration.ofDays(7));
                  if (v.isEmpty()) {
                    ctx.step().run("nudge", () -> mails.add("nudge " + u.email()));
                  }
                  return u.id();
                });
    serve(onboard);
    Started s =
        server
            .client()
            .start(
                onboard,
                new Signup("a@b.c"),
                StartOptions.builder().idempotencyKey("user-42").build());
    assertThat(s.created()).isTrue();
    RunInfo waiting = awaitWaiting("onboard-user", s.runId());
    assertThat(waiting.waitingFor().event()).isEqualTo("verify");

    assertThat(
            server
                .client()
                .signal("onboard-user", s.runId(), "verify", Map.of("userId", 9))
                .delivered())
        .isFalse();
    assertThat(
            server
                .client()
                .signal("onboard-user", s.runId(), "verify", Map.of("userId", 1001))
                .delivered())
        .isTrue();
    Long result =
        server
            .client()
            .runs()
            .awaitResult("onboard-user", s.runId(), Long.class, Duration.ofSeconds(20));
    assertThat(result).isEqualTo(1001L);
    assertThat(created.get()).isEqualTo(1);
    assertThat(mails).containsExactly("welcome a@b.c");
    assertThat(server.client().runs().steps("onboard-user", s.runId()))
        .extracting(StepInfo::name)
        .containsExactly("create-user", "welcome-delay", "send-welcome", "verify");
    RunInfo run = server.client().runs().get("onboard-user", s.runId());
    assertThat(run.retentionDays()).isEqualTo(30);

    Started again =
        server
            .client()
            .start(
                onboard,
                new Signup("a@b.c"),
                StartOptions.builder().idempotencyKey("user-42").build());
    assertThat(again.created()).isFalse();
    assertThat(again.runId()).isEqualTo(s.runId());
    assertThat(again.status()).isEqualTo(RunStatus.COMPLETED);
  }

  @Test
  void aWaitThatTimesOutTakesTheTimeoutBranch() {
    Workflow<String, String> wf =
        Workflow.define("wait-timeout", String.class, String.class)
            .run(
                (ctx, in) -> {
                  Optional<Verified> v =
                      ctx.step()
                          .waitForEvent(
                              "approve", Verified.class, Match.any(), Duration.ofMillis(200));
                  return v.isPresent() ? "approved" : "timed out";
                });
    serve(wf);
    Started s = server.client().start("wait-timeout", "x");
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("wait-timeout", s.runId(), String.class, Duration.ofSeconds(20)))
        .isEqualTo("timed out");
    assertThat(server.client().runs().steps("wait-timeout", s.runId()).get(0).timedOut()).isTrue();
  }

  @Test
  void inputsAndOutputsLargerThanAnyBufferGoBothWaysWhole() {
    // The task's answer and the journal's are hundreds of kilobytes, each completion's a few
    // hundred bytes: the worker's transport reads every one whole.
    String input = "i".repeat(200_000);
    Workflow<String, String> wf =
        Workflow.define("large-payloads", String.class, String.class)
            .run(
                (ctx, in) -> {
                  String a = ctx.step().run("echo", String.class, () -> in + "o".repeat(100_000));
                  String b =
                      ctx.step().run("tail", String.class, () -> a.substring(a.length() - 3));
                  return a.length() + ":" + b;
                });
    serve(wf);
    Started s = server.client().start("large-payloads", input);
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("large-payloads", s.runId(), String.class, Duration.ofSeconds(20)))
        .isEqualTo("300000:ooo");
    List<StepInfo> steps = server.client().runs().steps("large-payloads", s.runId());
    assertThat(steps.get(0).output().asText()).isEqualTo(input + "o".repeat(100_000));
  }

  @Test
  void cancelDuringASleepAndDuringAStep() throws Exception {
    AtomicInteger sawCancel = new AtomicInteger();
    Workflow<String, String> sleeper =
        Workflow.define("cancel-sleep", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().sleep("long", Duration.ofHours(1));
                  return "woke";
                });
    Workflow<String, String> busy =
        Workflow.define("cancel-step", String.class, String.class)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "slow",
                            String.class,
                            () -> {
                              if (ctx.cancellation().await(Duration.ofSeconds(30))) {
                                sawCancel.incrementAndGet();
                              }
                              return "finished anyway";
                            }));
    serve(sleeper);
    serve(
        busy,
        WorkerOptions.url(server.url())
            .pollWait(Duration.ofSeconds(2))
            .lease(Duration.ofSeconds(2)));

    Started a = server.client().start("cancel-sleep", "x");
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> !server.client().runs().steps("cancel-sleep", a.runId()).isEmpty());
    assertThat(server.client().runs().cancel("cancel-sleep", a.runId())).isTrue();
    assertThat(server.client().runs().cancel("cancel-sleep", a.runId())).isFalse();
    assertThat(server.client().runs().get("cancel-sleep", a.runId()).status())
        .isEqualTo(RunStatus.CANCELLED);

    Started b = server.client().start("cancel-step", "x");
    Thread.sleep(500);
    assertThat(server.client().runs().cancel("cancel-step", b.runId())).isTrue();
    Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> sawCancel.get() == 1);
    Thread.sleep(300);
    RunInfo run = server.client().runs().get("cancel-step", b.runId());
    assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(server.client().runs().steps("cancel-step", b.runId())).isEmpty();
  }

  @Test
  void versionOneAndTwoWorkersEachGetOnlyTheirRuns() {
    List<Integer> v1Saw = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Integer> v2Saw = new java.util.concurrent.CopyOnWriteArrayList<>();
    Workflow<String, Integer> v1 =
        Workflow.define("versioned", String.class, Integer.class)
            .version(1)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "who",
                            Integer.class,
                            () -> {
                              v1Saw.add(ctx.version());
                              return 1;
                            }));
    Workflow<String, Integer> v2 =
        Workflow.define("versioned", String.class, Integer.class)
            .version(2)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "who",
                            Integer.class,
                            () -> {
                              v2Saw.add(ctx.version());
                              return 2;
                            }));
    serve(v1);
    serve(v2);
    List<Started> ones = new ArrayList<>();
    List<Started> twos = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ones.add(server.client().start("versioned", "x", StartOptions.builder().version(1).build()));
      twos.add(server.client().start("versioned", "x", StartOptions.builder().version(2).build()));
    }
    for (Started s : ones) {
      assertThat(
              server
                  .client()
                  .runs()
                  .awaitResult("versioned", s.runId(), Integer.class, Duration.ofSeconds(20)))
          .isEqualTo(1);
    }
    for (Started s : twos) {
      assertThat(
              server
                  .client()
                  .runs()
                  .awaitResult("versioned", s.runId(), Integer.class, Duration.ofSeconds(20)))
          .isEqualTo(2);
    }
    assertThat(v1Saw).hasSize(5).containsOnly(1);
    assertThat(v2Saw).hasSize(5).containsOnly(2);
    // Without a version, a start takes the newest one a worker registered.
    assertThat(
            server
                .client()
                .runs()
                .get("versioned", server.client().start("versioned", "x").runId())
                .version())
        .isEqualTo(2);
  }

  @Test
  void fiveHundredConcurrentRunsComplete() {
    Workflow<Integer, Integer> wf =
        Workflow.define("many", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("a", Integer.class, () -> n + 1);
                  int b = ctx.step().run("b", Integer.class, () -> a * 2);
                  return ctx.step().run("c", Integer.class, () -> b - 1);
                });
    serve(wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(2)).concurrency(32));
    serve(wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(2)).concurrency(32));
    double requestsBefore = completeRequests();
    List<Started> runs = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      runs.add(server.client().start("many", i));
    }
    for (int i = 0; i < runs.size(); i++) {
      assertThat(
              server
                  .client()
                  .runs()
                  .awaitResult("many", runs.get(i).runId(), Integer.class, Duration.ofSeconds(60)))
          .isEqualTo((i + 1) * 2 - 1);
    }
    var page = server.client().runs().list("many", RunStatus.COMPLETED, null, 1000);
    assertThat(page.runs()).hasSize(500);
    // 2,000 completions (three steps and the end of each run): with 64 runs in flight, those
    // ready together share requests, so there are fewer requests than completions.
    assertThat(completeRequests() - requestsBefore).isPositive().isLessThan(2000);
  }

  /** Requests to the batch completion route so far, from the server's /metrics. */
  private static double completeRequests() {
    return server
        .api()
        .get("/metrics")
        .body()
        .lines()
        .filter(
            l ->
                l.startsWith("http_server_requests_seconds_count")
                    && l.contains("route=\"/v1/workflows/{name}/tasks/complete\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }
}
