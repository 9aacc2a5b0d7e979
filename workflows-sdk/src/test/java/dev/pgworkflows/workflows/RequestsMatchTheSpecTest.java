package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.RecordingProxy;
import dev.pgworkflows.workflows.testing.SpecRequests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every request the SDK sends conforms to openapi.yaml: the client's and the worker's requests go
 * through a recording proxy, cover every route the SDK uses (starts alone and in batches, polls,
 * task streams, completions alone and in batches with tasks taken back, retries, lease extensions,
 * signals, cancels, run reads, continue-as-new and chains), and each is checked against the spec.
 */
class RequestsMatchTheSpecTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  /** The routes the SDK uses. */
  private static final Set<String> ROUTES =
      Set.of(
          "POST /v1/workflows/{name}/runs",
          "POST /v1/workflows/{name}/runs/batch",
          "POST /v1/workflows/{name}/tasks/poll",
          "POST /v1/workflows/{name}/tasks/stream",
          "POST /v1/workflows/{name}/tasks/stream/{streamId}/slots",
          "DELETE /v1/workflows/{name}/tasks/stream/{streamId}",
          "POST /v1/workflows/{name}/tasks/complete",
          "POST /v1/workflows/{name}/runs/{runId}/retry",
          "POST /v1/workflows/{name}/runs/{runId}/lease",
          "POST /v1/workflows/{name}/runs/{runId}/signals/{event}",
          "DELETE /v1/workflows/{name}/runs/{runId}",
          "GET /v1/workflows/{name}/runs/{runId}",
          "GET /v1/workflows/{name}/runs",
          "GET /v1/workflows/{name}/runs/{runId}/steps",
          "PUT /v1/workflows/{name}/concurrency",
          "PUT /v1/workflows/{name}/concurrency/{key}",
          "DELETE /v1/workflows/{name}/concurrency/{key}",
          "POST /v1/workflows/{name}/runs/{runId}/children",
          "PUT /v1/rate-limits/{key}",
          "POST /v1/workflows/{name}/runs/{runId}/rate-limited",
          "GET /v1/workflows/{name}/runs/{runId}/blockers",
          "POST /v1/workflows/{name}/pause",
          "POST /v1/workflows/{name}/resume",
          "POST /v1/workflows/{name}/runs/{runId}/pause",
          "POST /v1/workflows/{name}/runs/{runId}/resume",
          "POST /v1/workflows/{name}/runs/{runId}/restart",
          "POST /v1/workflows/{name}/runs/{runId}/fork",
          "POST /v1/workflows/{name}/runs/{runId}/continue-as-new",
          "GET /v1/workflows/{name}/runs/{runId}/chain",
          "GET /v1/workflows/{name}/runs/{runId}/chain/last",
          "GET /v1/workers");

  record Approval(boolean ok, String by) {}

  @Test
  void everyRequestTheSdkSendsMatchesTheSpec() throws Exception {
    try (RecordingProxy proxy = new RecordingProxy(server.url())) {
      WorkflowClient client = WorkflowClient.connect(proxy.url());
      exerciseAWorker(proxy, client);
      exerciseBatches(proxy, client);
      exerciseAStream(proxy, client);
      exerciseFlowControl(proxy, client);
      exerciseOperations(client);
      exerciseContinueAsNew(proxy, client);

      List<RecordingProxy.Recorded> requests = proxy.requests();
      Set<String> routes = new TreeSet<>();
      List<String> violations = new ArrayList<>();
      for (RecordingProxy.Recorded r : requests) {
        routes.add(SpecRequests.route(r));
        for (String v : SpecRequests.violations(r)) {
          violations.add(r.method() + " " + r.target() + " " + r.body() + "\n    " + v);
        }
      }
      assertThat(violations).as("requests that do not match openapi.yaml").isEmpty();
      assertThat(routes).containsAll(ROUTES);
      assertThat(requests)
          .as("a batch of completions that takes tasks back")
          .anyMatch(r -> r.path().endsWith("/tasks/complete") && r.body().contains("\"take\""));
    }
  }

  @Test
  void theCheckCatchesAFieldTheSpecDoesNotKnow() {
    RecordingProxy.Recorded bad =
        new RecordingProxy.Recorded(
            "POST",
            "/v1/workflows/contract/tasks/poll",
            Map.of("authorization", "Bearer x", "content-type", "application/json"),
            "{\"versions\":[1],\"max\":1,\"bogus\":true}");
    assertThat(SpecRequests.violations(bad)).isNotEmpty();
  }

  /**
   * One long-polling worker: steps inline, a retry, a step long enough for lease extensions, a
   * sleep, a wait and its signal, a failed run, a cancelled run, and the run reads.
   */
  private static void exerciseAWorker(RecordingProxy proxy, WorkflowClient client) {
    AtomicInteger flaky = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("contract", String.class, String.class)
            .run(
                (ctx, in) -> {
                  String a = ctx.step().run("first", String.class, () -> in + "!");
                  if (in.equals("fail")) {
                    ctx.step()
                        .run(
                            "boom",
                            String.class,
                            () -> {
                              throw new IllegalStateException("no");
                            },
                            Retry.none());
                  }
                  ctx.step()
                      .run(
                          "flaky",
                          () -> {
                            if (flaky.incrementAndGet() == 1) {
                              throw new IllegalStateException("once");
                            }
                          },
                          Retry.fixed(3, Duration.ofMillis(10)));
                  ctx.step().run("slow", () -> Thread.sleep(1_500));
                  ctx.step().sleep("nap", Duration.ofMillis(10));
                  Approval ok =
                      ctx.step()
                          .waitForEvent(
                              "approve",
                              Approval.class,
                              Match.of("ok", true),
                              Duration.ofSeconds(60))
                          .orElseThrow();
                  return a + ok.by();
                });
    Worker worker =
        wf.serve(
            WorkerOptions.url(proxy.url())
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2))
                .taskStream(false));
    try {
      long approved =
          client
              .start(
                  wf, "go", StartOptions.builder().idempotencyKey("contract-1").version(1).build())
              .runId();
      long cancelled = client.start("contract", "wait").runId();
      long failed = client.start("contract", "fail").runId();
      awaitWaiting(client, approved);
      awaitWaiting(client, cancelled);
      assertThat(client.runs().blockers("contract", approved))
          .extracting(Blocker::kind)
          .contains("waiting");
      assertThat(client.workers("contract")).allMatch(w -> w.workflow().equals("contract"));
      assertThat(
              client.signal("contract", approved, "approve", new Approval(true, "ann")).delivered())
          .isTrue();
      assertThat(
              client.runs().awaitResult("contract", approved, String.class, Duration.ofSeconds(60)))
          .isEqualTo("go!ann");
      assertThat(client.runs().cancel("contract", cancelled)).isTrue();
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("contract", failed).status() == RunStatus.FAILED);
      assertThat(client.runs().list("contract", RunStatus.COMPLETED, null, 10).runs()).hasSize(1);
      Runs.Page first = client.runs().list("contract", null, null, 1);
      assertThat(first.nextCursor()).isPresent();
      assertThat(client.runs().list("contract", null, first.nextCursor().get(), 10).runs())
          .hasSize(2);
      assertThat(client.runs().steps("contract", approved))
          .extracting(StepInfo::name)
          .containsExactly("first", "flaky", "slow", "nap", "approve");
    } finally {
      worker.close();
    }
  }

  /**
   * An operator's controls over the runs {@link #exerciseAWorker} left: pauses of the workflow and
   * of a run, a restart of the failed run, forks with and without input, set-aside rows read.
   */
  private static void exerciseOperations(WorkflowClient client) {
    long failed = client.runs().list("contract", RunStatus.FAILED, null, 1).runs().get(0).runId();
    client.workflows().pause("contract");
    client.workflows().resume("contract");
    RunInfo restarted = client.runs().restart("contract", failed, "boom");
    assertThat(restarted.status()).isEqualTo(RunStatus.RUNNING);
    assertThat(client.runs().pause("contract", failed).paused()).isTrue();
    assertThat(client.runs().resume("contract", failed).paused()).isFalse();
    assertThat(client.runs().steps("contract", failed, true)).anyMatch(StepInfo::setAside);
    assertThat(client.runs().fork("contract", failed, "first").forkedFrom().runId())
        .isEqualTo(failed);
    assertThat(client.runs().fork("contract", failed, "first", "other").input().asText())
        .isEqualTo("other");
    client.runs().cancel("contract", failed);
  }

  /** A run that continues as new twice (with and without a held step), its chain and result. */
  private static void exerciseContinueAsNew(RecordingProxy proxy, WorkflowClient client) {
    Workflow<Integer, Integer> wf =
        Workflow.define("contract-renew", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  if (n == 1) {
                    ctx.step().run("tick", Integer.class, () -> n);
                  }
                  return n >= 2 ? n : ctx.continueAsNew(n + 1);
                });
    Worker worker =
        wf.serve(WorkerOptions.url(proxy.url()).pollWait(Duration.ofSeconds(1)).taskStream(false));
    try {
      long run = client.start(wf, 0).runId();
      assertThat(
              client
                  .runs()
                  .awaitResult("contract-renew", run, Integer.class, Duration.ofSeconds(30)))
          .isEqualTo(2);
      assertThat(client.runs().chain("contract-renew", run)).hasSize(3);
      assertThat(client.runs().chainLast("contract-renew", run).continuedFrom()).isNotNull();
    } finally {
      worker.close();
    }
  }

  /** Limits set and removed, a keyed start with a priority, and a rate-limited step. */
  private static void exerciseFlowControl(RecordingProxy proxy, WorkflowClient client) {
    AtomicInteger calls = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("contract-flow", String.class, String.class)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .run(
                            "call",
                            String.class,
                            () -> {
                              if (calls.incrementAndGet() == 1) {
                                throw new RateLimited(Duration.ofMillis(50));
                              }
                              return in;
                            }));
    Workflow<String, String> parent =
        Workflow.define("contract-parent", String.class, String.class)
            .concurrency(5)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .startChild(
                            "child",
                            wf,
                            in,
                            ChildOptions.builder()
                                .concurrencyKey("contract-key")
                                .priority(1)
                                .deadline(Duration.ofMinutes(5))
                                .build())
                        .result());
    client.workflows().setConcurrencyLimit("contract-flow", 2);
    client.workflows().setKeyConcurrencyLimit("contract-flow", "contract-key", 3);
    client.rateLimits().set("contract-key", 100, Duration.ofSeconds(1));
    Worker worker =
        wf.serve(WorkerOptions.url(proxy.url()).pollWait(Duration.ofSeconds(1)).taskStream(false));
    Worker parents =
        parent.serve(
            WorkerOptions.url(proxy.url()).pollWait(Duration.ofSeconds(1)).taskStream(false));
    try {
      long run =
          client
              .start(
                  wf,
                  "keyed",
                  StartOptions.builder()
                      .concurrencyKey("contract-key")
                      .priority(3)
                      .deadlineAt(Instant.now().plusSeconds(300))
                      .build())
              .runId();
      assertThat(
              client.runs().awaitResult("contract-flow", run, String.class, Duration.ofSeconds(30)))
          .isEqualTo("keyed");
      long viaChild = client.start(parent, "child").runId();
      assertThat(
              client
                  .runs()
                  .awaitResult("contract-parent", viaChild, String.class, Duration.ofSeconds(30)))
          .isEqualTo("child");
    } finally {
      worker.close();
      parents.close();
    }
    client.workflows().setKeyConcurrencyLimit("contract-flow", "contract-key", null);
    client.workflows().setConcurrencyLimit("contract-flow", null);
    client.rateLimits().set("contract-key", null, null);
  }

  /** Starts from many threads share requests; a saturated long-polling worker takes tasks back. */
  private static void exerciseBatches(RecordingProxy proxy, WorkflowClient client)
      throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("contract-many", Integer.class, Integer.class)
            .run((ctx, n) -> ctx.step().run("only", Integer.class, () -> n + 1));
    ExecutorService pool = Executors.newFixedThreadPool(16);
    List<Long> runs = new ArrayList<>();
    try {
      for (int round = 0; round < 20 && !sawBatchStart(proxy); round++) {
        List<CompletableFuture<Started>> fs = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
          int input = i;
          fs.add(CompletableFuture.supplyAsync(() -> client.start(wf, input), pool));
        }
        for (CompletableFuture<Started> f : fs) {
          runs.add(f.get(30, TimeUnit.SECONDS).runId());
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(sawBatchStart(proxy)).as("a batch of starts").isTrue();
    Worker worker =
        wf.serve(
            WorkerOptions.url(proxy.url())
                .concurrency(1)
                .pollWait(Duration.ofSeconds(1))
                .taskStream(false));
    try {
      for (long run : runs) {
        client.runs().awaitResult("contract-many", run, Integer.class, Duration.ofSeconds(60));
      }
    } finally {
      worker.close();
    }
  }

  private static boolean sawBatchStart(RecordingProxy proxy) {
    return proxy.requests().stream().anyMatch(r -> r.path().endsWith("/runs/batch"));
  }

  /** A worker that reads a task stream, and closes while its stream is open. */
  private static void exerciseAStream(RecordingProxy proxy, WorkflowClient client) {
    Workflow<Integer, Integer> wf =
        Workflow.define("contract-stream", Integer.class, Integer.class)
            .run((ctx, n) -> ctx.step().run("only", Integer.class, () -> n * 2));
    Worker worker =
        wf.serve(WorkerOptions.url(proxy.url()).pollWait(Duration.ofSeconds(10)).taskStream(true));
    try {
      long run = client.start(wf, 21).runId();
      assertThat(
              client
                  .runs()
                  .awaitResult("contract-stream", run, Integer.class, Duration.ofSeconds(30)))
          .isEqualTo(42);
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> proxy.requests().stream().anyMatch(r -> r.path().endsWith("/slots")));
    } finally {
      worker.close(); // ends the open stream
    }
  }

  private static void awaitWaiting(WorkflowClient client, long run) {
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> client.runs().get("contract", run).waitingFor() != null);
  }
}
