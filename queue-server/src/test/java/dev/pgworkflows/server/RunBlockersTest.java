package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET .../runs/{runId}/blockers} over real HTTP, one test per kind of reason a run is held:
 * each answer checked against openapi.yaml, and reading it changes nothing.
 */
class RunBlockersTest {
  // A short expiry, so the registry reports every half second.
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_WORKER_EXPIRY_MS", "3000");

  private static final Api api = server.api();

  private static JsonNode blockers(String workflow, long run) {
    Api.Response r = api.get("/v1/workflows/" + workflow + "/runs/" + run + "/blockers");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("runId").asLong()).isEqualTo(run);
    return r.json().get("blockers");
  }

  private static JsonNode only(JsonNode blockers, String kind) {
    List<JsonNode> found = new ArrayList<>();
    blockers.forEach(
        b -> {
          if (b.get("kind").asText().equals(kind)) {
            found.add(b);
          }
        });
    assertThat(found).as(kind + " in " + blockers).hasSize(1);
    assertThat(found.get(0).get("text").asText()).isNotBlank();
    return found.get(0);
  }

  private static List<String> kinds(JsonNode blockers) {
    List<String> kinds = new ArrayList<>();
    blockers.forEach(b -> kinds.add(b.get("kind").asText()));
    return kinds;
  }

  /** A poll of these versions by a named worker, waiting for nothing. */
  private static void seen(String workflow, String worker, List<Integer> versions) {
    Api.Response r =
        api.send(
            "POST",
            "/v1/workflows/" + workflow + "/tasks/poll",
            Map.of("versions", versions, "waitSeconds", 0),
            Map.of("X-Worker-Id", worker));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
  }

  /** Waits until the listing shows the worker, written by the server's registry. */
  private static void awaitListed(String workflow, String worker) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < until) {
      JsonNode ws = api.get("/v1/workers?workflow=" + workflow).json().get("workers");
      for (JsonNode w : ws) {
        if (w.get("id").asText().equals(worker)) {
          return;
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("worker " + worker + " was not listed");
  }

  @Test
  void aDueRunWithAWorkerOfItsVersionHasNoBlockers() throws Exception {
    WorkerClient worker = server.worker("due");
    seen("due", "due-worker", List.of(1));
    awaitListed("due", "due-worker");
    long run = worker.start(Map.of());
    assertThat(blockers("due", run)).isEmpty();
    // Asking changed nothing: the task is still there to take.
    assertThat(worker.pollOne().get("runId").asLong()).isEqualTo(run);
  }

  @Test
  void aSleepingRunSaysUntilWhen() {
    WorkerClient worker = server.worker("sleepy");
    long run = worker.start(Map.of());
    Instant before = Instant.now();
    worker.complete(
        worker.pollOne(),
        Map.of("step", Map.of("name", "nap", "kind", "sleep"), "next", Map.of("delayMs", 600_000)));
    JsonNode sleeping = only(blockers("sleepy", run), "sleeping");
    Instant until = Instant.parse(sleeping.get("until").asText());
    assertThat(until).isBetween(before.plusSeconds(590), before.plusSeconds(610));
    assertThat(sleeping.get("text").asText()).contains("sleeps until");
  }

  @Test
  void aWaitingRunNamesItsEventAndTheSignalsThatDidNotMatch() {
    WorkerClient worker = server.worker("waiter");
    long run = worker.start(Map.of());
    Api.Response sent =
        api.post("/v1/workflows/waiter/runs/" + run + "/signals/refunded", Map.of("amount", 5));
    assertThat(sent.json().get("outcome").asText()).as(sent.body()).isEqualTo("buffered");
    worker.complete(
        worker.pollOne(), Map.of("next", Map.of("wait", Map.of("step", "pay", "event", "paid"))));

    JsonNode waiting = only(blockers("waiter", run), "waiting");
    assertThat(waiting.get("event").asText()).isEqualTo("paid");
    assertThat(waiting.get("step").asText()).isEqualTo("pay");
    assertThat(waiting.get("until").isNull()).isTrue();
    assertThat(waiting.get("since").asText()).isNotBlank();
    assertThat(waiting.get("unmatched")).hasSize(1);
    assertThat(waiting.get("unmatched").get(0).get("event").asText()).isEqualTo("refunded");
    assertThat(waiting.get("unmatched").get(0).get("payload").get("amount").asInt()).isEqualTo(5);
    assertThat(waiting.get("text").asText()).contains("\"paid\"").contains("do not match");
    // A wait without a timeout has no task: no worker is needed before the event comes.
    assertThat(kinds(blockers("waiter", run))).containsExactly("waiting");
  }

  @Test
  void aWaitWithATimeoutSaysUntilWhen() {
    WorkerClient worker = server.worker("timed-wait");
    long run = worker.start(Map.of());
    worker.complete(
        worker.pollOne(),
        Map.of(
            "next",
            Map.of(
                "delayMs",
                600_000,
                "wait",
                Map.of("step", "pay", "event", "paid", "match", Map.of("order", 7)))));
    JsonNode waiting = only(blockers("timed-wait", run), "waiting");
    assertThat(waiting.get("match").get("order").asInt()).isEqualTo(7);
    assertThat(Instant.parse(waiting.get("until").asText()))
        .isAfter(Instant.now().plusSeconds(590));
    assertThat(waiting.get("unmatched")).isEmpty();
  }

  @Test
  void aLeasedRunSaysUntilWhenItsWorkerHoldsIt() {
    WorkerClient worker = server.worker("held");
    long run = worker.start(Map.of());
    JsonNode task = worker.pollOne();
    JsonNode leased = only(blockers("held", run), "leased");
    assertThat(leased.get("attempt").asInt()).isEqualTo(1);
    assertThat(Instant.parse(leased.get("until").asText())).isAfter(Instant.now().plusSeconds(50));
    assertThat(kinds(blockers("held", run))).containsExactly("leased");
    assertThat(worker.complete(task, Map.of("result", Map.of("status", "completed"))).status())
        .isEqualTo(200);
  }

  @Test
  void aRunOfAVersionNobodyServesSaysWhichVersionsAreServed() throws Exception {
    WorkerClient worker = server.worker("versioned");
    seen("versioned", "old-worker", List.of(1, 2));
    awaitListed("versioned", "old-worker");
    long run = WorkerClient.created(worker.startWith(Map.of("input", Map.of(), "version", 3)));
    JsonNode none = only(blockers("versioned", run), "no_worker");
    assertThat(none.get("version").asInt()).isEqualTo(3);
    assertThat(none.get("servedVersions")).extracting(JsonNode::asInt).containsExactly(1, 2);
    assertThat(none.get("text").asText()).contains("version 3");
  }

  @Test
  void aRunOfAWorkflowNoWorkerWasSeenForSaysSo() {
    long run = server.worker("orphan").start(Map.of());
    JsonNode none = only(blockers("orphan", run), "no_worker");
    assertThat(none.get("servedVersions")).isEmpty();
  }

  @Test
  void aRunParkedBehindItsKeysLimitSaysItsPlaceInLine() {
    WorkerClient worker = server.worker("limited");
    assertThat(api.put("/v1/workflows/limited/concurrency", Map.of("limit", 1)).status())
        .isEqualTo(200);
    long first =
        WorkerClient.created(
            worker.startWith(Map.of("input", Map.of(), "concurrencyKey", "acct-1")));
    long second =
        WorkerClient.created(
            worker.startWith(Map.of("input", Map.of(), "concurrencyKey", "acct-1")));
    Api.Response polled = worker.poll(List.of(1), 2, 1);
    assertThat(polled.json().get("tasks")).hasSize(1);
    assertThat(polled.json().get("tasks").get(0).get("runId").asLong()).isEqualTo(first);

    JsonNode held = only(blockers("limited", second), "concurrency");
    assertThat(held.get("key").asText()).isEqualTo("acct-1");
    assertThat(held.get("limit").asInt()).isEqualTo(1);
    assertThat(held.get("active").asInt()).isEqualTo(1);
    assertThat(held.get("position").asInt()).isEqualTo(1);
    assertThat(kinds(blockers("limited", second))).doesNotContain("sleeping", "leased");
  }

  @Test
  void aRunOfASuspendedKeySaysUntilWhen() {
    WorkerClient worker = server.worker("throttled");
    long run =
        WorkerClient.created(
            worker.startWith(Map.of("input", Map.of(), "concurrencyKey", "api-x")));
    JsonNode task = worker.pollOne();
    Api.Response told =
        api.post(
            "/v1/workflows/throttled/runs/" + run + "/rate-limited",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "retryAfterMs", 600_000));
    assertThat(told.status()).as(told.body()).isEqualTo(200);

    JsonNode limited = only(blockers("throttled", run), "rate_limited");
    assertThat(limited.get("key").asText()).isEqualTo("api-x");
    assertThat(Instant.parse(limited.get("until").asText()))
        .isAfter(Instant.now().plusSeconds(590));
    assertThat(kinds(blockers("throttled", run))).doesNotContain("sleeping", "leased");
  }

  @Test
  void aRunOfAKeyOutOfTokensSaysWhenTheNextComes() {
    WorkerClient worker = server.worker("bucketed");
    Api.Response limit =
        api.put("/v1/rate-limits/daily-1", Map.of("limit", 1, "periodMs", 86_400_000));
    assertThat(limit.status()).as(limit.body()).isEqualTo(200);
    WorkerClient.created(worker.startWith(Map.of("input", Map.of(), "concurrencyKey", "daily-1")));
    long second =
        WorkerClient.created(
            worker.startWith(Map.of("input", Map.of(), "concurrencyKey", "daily-1")));
    assertThat(worker.poll(List.of(1), 2, 1).json().get("tasks")).hasSize(1);

    JsonNode limited = only(blockers("bucketed", second), "rate_limited");
    assertThat(limited.get("key").asText()).isEqualTo("daily-1");
    assertThat(Instant.parse(limited.get("until").asText()))
        .isAfter(Instant.now().plus(Duration.ofHours(23)));
    assertThat(limited.get("text").asText()).contains("out of tokens");
    assertThat(kinds(blockers("bucketed", second))).doesNotContain("sleeping", "leased");
  }

  @Test
  void pausedRunsAndWorkflowsSaySince() {
    WorkerClient worker = server.worker("paused");
    long run = worker.start(Map.of());
    Api.Response pause = api.post("/v1/workflows/paused/runs/" + run + "/pause", null);
    assertThat(pause.status()).as(pause.body()).isEqualTo(200);
    JsonNode paused = only(blockers("paused", run), "paused");
    assertThat(Instant.parse(paused.get("since").asText())).isBefore(Instant.now().plusSeconds(1));

    Api.Response pauseAll = api.post("/v1/workflows/paused/pause", null);
    assertThat(pauseAll.status()).as(pauseAll.body()).isEqualTo(200);
    JsonNode all = blockers("paused", run);
    assertThat(kinds(all).subList(0, 2)).containsExactly("workflow_paused", "paused");
    assertThat(only(all, "workflow_paused").get("text").asText()).contains("workflow paused");
  }

  @Test
  void anEndedRunSaysHowItEnded() {
    WorkerClient worker = server.worker("done");
    long run = worker.start(Map.of());
    worker.complete(worker.pollOne(), Map.of("result", Map.of("status", "completed")));
    Api.Response r = api.get("/v1/workflows/done/runs/" + run + "/blockers");
    assertThat(r.json().get("status").asText()).isEqualTo("completed");
    JsonNode ended = only(r.json().get("blockers"), "ended");
    assertThat(ended.get("status").asText()).isEqualTo("completed");
    assertThat(r.json().get("blockers")).hasSize(1);
  }

  @Test
  void unknownRunsAndBadNamesAreRefused() {
    long run = server.worker("known").start(Map.of());
    Api.Response missing = api.get("/v1/workflows/known/runs/" + (run + 1000) + "/blockers");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.isProblem()).isTrue();
    // A run of another workflow is not this workflow's.
    assertThat(api.get("/v1/workflows/other/runs/" + run + "/blockers").status()).isEqualTo(404);
    Api.Response badName = api.get("/v1/workflows/Bad!/runs/" + run + "/blockers");
    assertThat(badName.status()).isEqualTo(400);
    assertThat(badName.json().get("field").asText()).isEqualTo("name");
    Api.Response badRun = api.get("/v1/workflows/known/runs/0/blockers");
    assertThat(badRun.status()).isEqualTo(400);
    assertThat(badRun.json().get("field").asText()).isEqualTo("runId");
  }
}
