package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Delayed starts, deadlines and debounced starts over HTTP: a delayed run exists at once and wakes
 * a waiting worker when it comes due, a run past its deadline is ended by the server as timed_out,
 * debounced starts collapse into one run; bad timing is a 400 naming the field that starts nothing.
 * Every exchange is checked against openapi.yaml.
 */
class StartTimingRoutesTest {
  // Without the timers, a waiting poll would only look again after this long.
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000")
          .and("WORKFLOWS_DEADLINE_INTERVAL_MS", "50");

  private static final Api api = server.api();

  private static Map<String, Object> body(Object... fields) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < fields.length; i += 2) {
      m.put((String) fields[i], fields[i + 1]);
    }
    return m;
  }

  @Test
  void aDelayedRunIsVisibleAtOnceAndWakesAWaitingWorkerWhenDue() throws Exception {
    WorkerClient worker = server.worker("later");
    CompletableFuture<Api.Response> waiting = worker.waitingPoll(List.of(1), 1, 30);
    Instant before = Instant.now();
    long run = WorkerClient.created(worker.startWith(body("input", 1, "delayMs", 700)));
    JsonNode shown = worker.run(run);
    assertThat(shown.get("status").asText()).isEqualTo("running");
    Instant due = Instant.parse(shown.get("dueAt").asText());
    assertThat(due).isBetween(before.plusMillis(600), before.plusMillis(2000));

    Api.Response got = waiting.get();
    Duration took = Duration.between(before, Instant.now());
    assertThat(got.json().get("tasks")).hasSize(1);
    assertThat(got.json().get("tasks").get(0).get("runId").asLong()).isEqualTo(run);
    assertThat(took).isBetween(Duration.ofMillis(650), Duration.ofSeconds(5));
  }

  @Test
  void aRunDueLaterCanBeCancelledAndStartAtInThePastMeansNow() {
    WorkerClient worker = server.worker("soon");
    long later =
        WorkerClient.created(
            worker.startWith(
                body("input", 1, "startAt", Instant.now().plusSeconds(3600).toString())));
    assertThat(api.delete("/v1/workflows/soon/runs/" + later).json().get("cancelled").asBoolean())
        .isTrue();
    long now = WorkerClient.created(worker.startWith(body("startAt", "2001-01-01T00:00:00Z")));
    assertThat(worker.pollOne().get("runId").asLong()).isEqualTo(now);
  }

  @Test
  void badTimingIsA400NamingTheFieldAndStartsNothing() {
    WorkerClient worker = server.worker("badtime");
    Object[][] cases = {
      {body("delayMs", 10, "startAt", "2030-01-01T00:00:00Z"), "delayMs"},
      {body("delayMs", -1), "delayMs"},
      {body("deadlineMs", 5, "deadlineAt", "2030-01-01T00:00:00Z"), "deadlineMs"},
      {body("debounceKey", "k"), "debounceMs"},
      {body("debounceKey", "k", "debounceMs", 10, "delayMs", 5), "debounceKey"},
      {body("debounceKey", "k", "debounceMs", 10, "idempotencyKey", "i"), "debounceKey"},
      {body("startAt", Instant.now().plus(Duration.ofDays(400)).toString()), "startAt"},
      {body("deadlineAt", "2001-01-01T00:00:00Z"), "deadlineAt"},
      {body("startAt", "tomorrow"), "startAt"},
      {body("debounceKey", "k", "debounceMs", 86_400_001L), "debounceMs"},
    };
    for (Object[] c : cases) {
      @SuppressWarnings("unchecked")
      Api.Response r = worker.startWith((Map<String, Object>) c[0]);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.body()).contains((String) c[1]);
    }
    assertThat(api.get("/v1/workflows/badtime/runs").json().get("runs")).isEmpty();
  }

  @Test
  void aBatchStartsDelayedItemsAndRejectsOnlyTheBadOne() {
    Api.Response r =
        api.post(
            "/v1/workflows/batchtime/runs/batch",
            Map.of(
                "runs",
                List.of(
                    body("input", 1, "delayMs", 60_000),
                    body("input", 2, "delayMs", -5),
                    body("input", 3, "deadlineMs", 60_000))));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode runs = r.json().get("runs");
    assertThat(runs.get(0).get("created").asBoolean()).isTrue();
    assertThat(runs.get(1).get("outcome").asText()).isEqualTo("rejected");
    assertThat(runs.get(1).get("detail").asText()).contains("delayMs");
    assertThat(runs.get(2).get("created").asBoolean()).isTrue();
    WorkerClient worker = server.worker("batchtime");
    assertThat(worker.run(runs.get(0).get("runId").asLong()).has("dueAt")).isTrue();
    assertThat(worker.run(runs.get(2).get("runId").asLong()).has("deadlineAt")).isTrue();
    assertThat(worker.pollOne().get("runId").asLong()).isEqualTo(runs.get(2).get("runId").asLong());
  }

  @Test
  void aRunPastItsDeadlineIsTimedOutByTheServerAndItsWorkerFindsOut() throws Exception {
    WorkerClient worker = server.worker("deadline");
    long run = WorkerClient.created(worker.startWith(body("input", 1, "deadlineMs", 300)));
    JsonNode task = worker.pollOne();
    JsonNode shown = worker.run(run);
    for (int i = 0; i < 100 && shown.get("status").asText().equals("running"); i++) {
      Thread.sleep(50);
      shown = worker.run(run);
    }
    assertThat(shown.get("status").asText()).isEqualTo("timed_out");
    assertThat(shown.get("error").get("type").asText()).isEqualTo("DeadlineExceeded");
    assertThat(shown.has("completedAt")).isTrue();
    Api.Response late =
        worker.complete(
            task,
            Map.of(
                "step",
                Map.of("name", "s", "kind", "run", "output", 1),
                "next",
                Map.of("inline", true)));
    assertThat(late.json().get("outcome").asText()).isEqualTo("not_running");
    assertThat(worker.lease(task, 60).status()).isIn(409, 410);
    JsonNode listed = api.get("/v1/workflows/deadline/runs?status=timed_out").json().get("runs");
    assertThat(listed).hasSize(1);
    assertThat(listed.get(0).get("runId").asLong()).isEqualTo(run);
    // Counted in the index and reported as a run end.
    JsonNode index = api.get("/v1/workflows").json().get("workflows");
    for (JsonNode w : index) {
      if (w.get("name").asText().equals("deadline")) {
        assertThat(w.get("timedOut").asLong()).isEqualTo(1);
        assertThat(w.get("running").asLong()).isZero();
      }
    }
    assertThat(api.get("/metrics").body())
        .containsPattern("workflow_runs_completed_total\\{[^}]*status=\"timed_out\"");
  }

  @Test
  void debouncedStartsCollapseIntoOneRunWithTheLatestInput() {
    WorkerClient worker = server.worker("deb");
    Api.Response first =
        worker.startWith(body("input", 1, "debounceKey", "u1", "debounceMs", 60_000));
    long run = WorkerClient.created(first);
    assertThat(first.json().has("debounced")).isFalse();
    for (int i = 2; i <= 3; i++) {
      Api.Response again =
          worker.startWith(body("input", i, "debounceKey", "u1", "debounceMs", 60_000));
      assertThat(again.status()).as(again.body()).isEqualTo(200);
      assertThat(again.json().get("runId").asLong()).isEqualTo(run);
      assertThat(again.json().get("created").asBoolean()).isFalse();
      assertThat(again.json().get("debounced").asBoolean()).isTrue();
    }
    JsonNode shown = worker.run(run);
    assertThat(shown.get("input").asInt()).isEqualTo(3);
    assertThat(shown.get("debounceKey").asText()).isEqualTo("u1");
    assertThat(shown.has("dueAt")).isTrue();
    assertThat(api.get("/v1/workflows/deb/runs").json().get("runs")).hasSize(1);
  }
}
