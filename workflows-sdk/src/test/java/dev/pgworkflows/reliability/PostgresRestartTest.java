package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL stopped immediately and started again under load: the server recovers its pool and
 * LISTEN connection, /readyz shows the outage, no acknowledged send or start is lost, and a poll
 * that was waiting through the outage still wakes afterwards.
 */
@Tag("reliability")
class PostgresRestartTest {

  @Test
  void nothingAcknowledgedIsLostAcrossAnImmediateRestart() throws Exception {
    try (RestartablePostgres pg = RestartablePostgres.start();
        TestServer server =
            TestServer.start(
                new TestDatabase("postgres", pg.jdbcUrl(), "postgres", "postgres"),
                Map.of("WORKFLOWS_FALLBACK_POLL_MS", "500"))) {
      Api api = server.api();
      WorkflowClient client = WorkflowClient.connect(server.url());
      Workflow<Integer, Integer> wf =
          Workflow.define("survive", Integer.class, Integer.class)
              .run(
                  (ctx, n) -> {
                    int a = ctx.step().run("a", Integer.class, () -> n + 1);
                    int b = ctx.step().run("b", Integer.class, () -> a + 1);
                    return ctx.step().run("c", Integer.class, () -> b + 1);
                  });
      Worker worker = wf.serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(2)));
      api.put("/v1/queues/acked", null);
      api.put("/v1/queues/waiting", null);

      Set<Long> runs = ConcurrentHashMap.newKeySet();
      Set<Long> messages = ConcurrentHashMap.newKeySet();
      AtomicBoolean producing = new AtomicBoolean(true);
      Thread producer =
          new Thread(
              () -> {
                int i = 0;
                while (producing.get()) {
                  i++;
                  try {
                    runs.add(client.start("survive", i).runId());
                  } catch (RuntimeException e) {
                    // not acknowledged: not counted
                  }
                  Api.Response r = api.post("/v1/queues/acked/messages", Map.of("body", i));
                  if (r.status() == 201) {
                    messages.add(r.json().get("ids").get(0).asLong());
                  }
                  sleep(5);
                }
              });
      producer.start();
      CompletableFuture<Api.Response> waiting =
          CompletableFuture.supplyAsync(
              () -> api.post("/v1/queues/waiting/messages/receive", Map.of("waitSeconds", 30)));
      Thread.sleep(2_000);

      pg.stopImmediately();
      Awaitility.await()
          .atMost(20, TimeUnit.SECONDS)
          .until(() -> api.withToken(null).get("/readyz").status() == 503);
      Thread.sleep(2_000);
      pg.startAgain();
      Awaitility.await()
          .atMost(60, TimeUnit.SECONDS)
          .until(() -> api.withToken(null).get("/readyz").status() == 200);
      Thread.sleep(2_000);
      producing.set(false);
      producer.join();

      api.post("/v1/queues/waiting/messages", Map.of("body", "after the restart"));
      Api.Response woke = waiting.get(30, TimeUnit.SECONDS);
      assertThat(woke.status()).isEqualTo(200);
      assertThat(woke.json().get("messages")).hasSize(1);

      assertThat(runs).hasSizeGreaterThan(50);
      Awaitility.await()
          .atMost(120, TimeUnit.SECONDS)
          .pollInterval(Duration.ofMillis(500))
          .until(
              () ->
                  runs.stream()
                      .allMatch(
                          id -> client.runs().get("survive", id).status() == RunStatus.COMPLETED));
      for (long id : runs) {
        List<StepInfo> steps = client.runs().steps("survive", id);
        assertThat(steps).extracting(StepInfo::name).containsExactly("a", "b", "c");
      }
      worker.close();

      Set<Long> found = new HashSet<>();
      while (true) {
        var got =
            api.post("/v1/queues/acked/messages/receive", Map.of("max", 100))
                .json()
                .get("messages");
        if (got.isEmpty()) {
          break;
        }
        got.forEach(m -> found.add(m.get("id").asLong()));
      }
      assertThat(found).containsAll(messages);
      System.out.printf(
          "postgres restart: %d acknowledged starts and %d acknowledged sends, none lost%n",
          runs.size(), messages.size());
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
