package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flow control over HTTP: concurrency limits, rate limits, a worker's rate-limited hand-back, and
 * starts with a key or a priority; bad input answered 400 naming the field and changing nothing.
 * Every exchange checked against openapi.yaml.
 */
class FlowControlRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static void assertBadField(Api.Response r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().get("field").asText()).isEqualTo(field);
  }

  @Test
  void aConcurrencyLimitIsSetReadAndRemoved() {
    Api.Response set = api.put("/v1/workflows/limited/concurrency", Map.of("limit", 3));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(set.json().get("limit").asInt()).isEqualTo(3);
    assertThat(api.get("/v1/workflows/limited/concurrency").json().get("limit").asInt())
        .isEqualTo(3);

    Map<String, Object> none = new HashMap<>();
    none.put("limit", null);
    assertThat(api.put("/v1/workflows/limited/concurrency", none).status()).isEqualTo(200);
    assertThat(api.get("/v1/workflows/limited/concurrency").json().has("limit")).isFalse();
  }

  @Test
  void aBadLimitIsRefusedNamingTheFieldAndChangesNothing() {
    api.put("/v1/workflows/kept/concurrency", Map.of("limit", 2));
    assertBadField(api.put("/v1/workflows/kept/concurrency", Map.of("limit", 0)), "limit");
    assertThat(api.get("/v1/workflows/kept/concurrency").json().get("limit").asInt()).isEqualTo(2);

    assertBadField(api.put("/v1/rate-limits/k1", Map.of("limit", 5)), "periodMs");
    assertBadField(api.put("/v1/rate-limits/k1", Map.of("limit", 5, "periodMs", 0)), "periodMs");
    assertBadField(api.put("/v1/rate-limits/k1", Map.of("limit", 0, "periodMs", 1000)), "limit");
    assertThat(api.get("/v1/rate-limits/k1").status()).isEqualTo(404);
  }

  @Test
  void aStartWithABadKeyOrPriorityIsRefusedNamingTheFieldAndStartsNothing() {
    WorkerClient worker = server.worker("bad-start");
    assertBadField(worker.startWith(Map.of("input", 1, "concurrencyKey", "")), "concurrencyKey");
    assertBadField(worker.startWith(Map.of("input", 1, "priority", 10)), "priority");
    assertBadField(worker.startWith(Map.of("input", 1, "priority", -1)), "priority");
    assertThat(api.get("/v1/workflows/bad-start/runs").json().get("runs")).isEmpty();
  }

  @Test
  void aRateLimitIsSetAndReadAndItsBucketHoldsTasksBack() {
    Api.Response set =
        api.put("/v1/rate-limits/two-a-minute", Map.of("limit", 2, "periodMs", 60_000));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    JsonNode read = api.get("/v1/rate-limits/two-a-minute").json();
    assertThat(read.get("limit").asInt()).isEqualTo(2);
    assertThat(read.get("periodMs").asLong()).isEqualTo(60_000);

    WorkerClient worker = server.worker("bucketed");
    for (int i = 0; i < 4; i++) {
      WorkerClient.created(worker.startWith(Map.of("input", i, "concurrencyKey", "two-a-minute")));
    }
    Api.Response polled = worker.poll(List.of(1), 10, 0);
    assertThat(polled.json().get("tasks")).as(polled.body()).hasSize(2);
    assertThat(worker.poll(List.of(1), 10, 0).json().get("tasks")).isEmpty();
  }

  @Test
  void aRateLimitedStepHoldsEveryRunOfItsKeyBackUntilTheReset() {
    WorkerClient worker = server.worker("limited-api");
    long first =
        WorkerClient.created(worker.startWith(Map.of("input", 1, "concurrencyKey", "api")));
    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(first);
    long other =
        WorkerClient.created(worker.startWith(Map.of("input", 2, "concurrencyKey", "api")));
    long free = WorkerClient.created(worker.startWith(Map.of("input", 3)));

    Api.Response limited =
        api.post(
            "/v1/workflows/limited-api/runs/" + first + "/rate-limited",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "retryAfterMs", 60_000));
    assertThat(limited.status()).as(limited.body()).isEqualTo(200);
    assertThat(limited.json().get("outcome").asText()).isEqualTo("ok");
    Instant resume = Instant.parse(limited.json().get("resumeAt").asText());
    assertThat(resume).isAfter(Instant.now().plusSeconds(50));

    // Only the run without the key is handed out; the key's runs wait for the reset.
    JsonNode tasks = worker.poll(List.of(1), 10, 0).json().get("tasks");
    assertThat(tasks).hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(free);
    assertThat(worker.poll(List.of(1), 10, 0).json().get("tasks")).isEmpty();
    assertThat(Instant.parse(api.get("/v1/rate-limits/api").json().get("suspendedUntil").asText()))
        .isEqualTo(resume);
    assertThat(worker.run(other).get("status").asText()).isEqualTo("running");

    // The same receipt again no longer holds the lease.
    Api.Response stale =
        api.post(
            "/v1/workflows/limited-api/runs/" + first + "/rate-limited",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "retryAfterMs", 1000));
    assertThat(stale.json().get("outcome").asText()).isEqualTo("stale");
  }

  @Test
  void aRateLimitedReportWithABadDelayIsRefusedNamingTheField() {
    WorkerClient worker = server.worker("limited-bad");
    long run = WorkerClient.created(worker.startWith(Map.of("input", 1, "concurrencyKey", "b")));
    JsonNode task = worker.pollOne();
    assertBadField(
        api.post(
            "/v1/workflows/limited-bad/runs/" + run + "/rate-limited",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "retryAfterMs", -1)),
        "retryAfterMs");
    assertThat(api.get("/v1/rate-limits/b").status()).isEqualTo(404);
  }

  @Test
  void runsOverTheLimitAreHandedOutAsSlotsFree() {
    api.put("/v1/workflows/two-at-once/concurrency", Map.of("limit", 2));
    WorkerClient worker = server.worker("two-at-once");
    for (int i = 0; i < 3; i++) {
      WorkerClient.created(worker.startWith(Map.of("input", i, "concurrencyKey", "c")));
    }
    JsonNode tasks = worker.poll(List.of(1), 10, 0).json().get("tasks");
    assertThat(tasks).hasSize(2);
    assertThat(worker.poll(List.of(1), 10, 0).json().get("tasks")).isEmpty();

    Api.Response done =
        worker.complete(tasks.get(0), Map.of("result", Map.of("status", "completed", "output", 1)));
    assertThat(done.json().get("outcome").asText()).as(done.body()).isEqualTo("ok");
    JsonNode third = worker.pollOne();
    assertThat(third.get("input").asInt()).isEqualTo(2);
  }

  @Test
  void aLimitsStrategyAndLimitFromAreSetAndReadBack() {
    Map<String, Object> body =
        Map.of(
            "limit",
            1,
            "strategy",
            "skip",
            "limitFrom",
            "$.plan",
            "limits",
            Map.of("premium", 10, "free", 1));
    Api.Response set = api.put("/v1/workflows/planned/concurrency", body);
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    JsonNode read = api.get("/v1/workflows/planned/concurrency").json();
    assertThat(read.get("strategy").asText()).isEqualTo("skip");
    assertThat(read.get("limitFrom").asText()).isEqualTo("$.plan");
    assertThat(read.get("limits").get("premium").asInt()).isEqualTo(10);
    assertThat(
            api.put("/v1/workflows/queued/concurrency", Map.of("limit", 2))
                .json()
                .get("strategy")
                .asText())
        .isEqualTo("queue");
  }

  @Test
  void badStrategySettingsAreRefusedNamingTheFieldAndChangeNothing() {
    api.put("/v1/workflows/settled/concurrency", Map.of("limit", 2, "strategy", "skip"));
    assertBadField(
        api.put("/v1/workflows/settled/concurrency", Map.of("limit", 1, "strategy", "newest")),
        "strategy");
    assertBadField(
        api.put("/v1/workflows/settled/concurrency", Map.of("limit", 1, "limits", Map.of("a", 1))),
        "limits");
    assertBadField(
        api.put(
            "/v1/workflows/settled/concurrency",
            Map.of("limit", 1, "limitFrom", "$.plan", "limits", Map.of("a", 0))),
        "limits.a");
    assertBadField(
        api.put("/v1/workflows/settled/concurrency", Map.of("limitFrom", "plan", "limit", 1)),
        "limitFrom");
    Map<String, Object> removeWithStrategy = new HashMap<>();
    removeWithStrategy.put("limit", null);
    removeWithStrategy.put("strategy", "skip");
    assertBadField(api.put("/v1/workflows/settled/concurrency", removeWithStrategy), "limit");
    Api.Response badPath =
        api.put("/v1/workflows/settled/concurrency", Map.of("limit", 1, "limitFrom", "$.["));
    assertThat(badPath.status()).as(badPath.body()).isEqualTo(400);
    assertThat(badPath.json().get("detail").asText()).startsWith("limitFrom is not a JSON path");
    JsonNode kept = api.get("/v1/workflows/settled/concurrency").json();
    assertThat(kept.get("limit").asInt()).isEqualTo(2);
    assertThat(kept.get("strategy").asText()).isEqualTo("skip");
    assertThat(kept.has("limitFrom")).isFalse();
  }

  @Test
  void aStartAnswersWhatTheStrategyMadeOfIt() {
    api.put(
        "/v1/workflows/newest-wins/concurrency",
        Map.of("limit", 1, "strategy", "cancel_in_progress"));
    WorkerClient worker = server.worker("newest-wins");
    Api.Response first = worker.startWith(Map.of("input", 1, "concurrencyKey", "k"));
    assertThat(first.json().get("admission").asText()).as(first.body()).isEqualTo("started");
    Api.Response second = worker.startWith(Map.of("input", 2, "concurrencyKey", "k"));
    assertThat(second.json().get("admission").asText()).isEqualTo("started");
    assertThat(second.json().get("cancelledRuns").get(0).asLong())
        .isEqualTo(first.json().get("runId").asLong());
    assertThat(
            api.get("/v1/workflows/newest-wins/runs/" + first.json().get("runId").asLong())
                .json()
                .get("status")
                .asText())
        .isEqualTo("cancelled");

    api.put("/v1/workflows/one-only/concurrency", Map.of("limit", 1, "strategy", "skip"));
    WorkerClient only = server.worker("one-only");
    long kept = WorkerClient.created(only.startWith(Map.of("input", 1, "concurrencyKey", "k")));
    Api.Response skipped = only.startWith(Map.of("input", 2, "concurrencyKey", "k"));
    assertThat(skipped.json().get("admission").asText()).as(skipped.body()).isEqualTo("skipped");
    assertThat(skipped.json().get("runId").asLong()).isEqualTo(kept);
    assertThat(skipped.json().get("created").asBoolean()).isFalse();
    assertThat(api.get("/v1/workflows/one-only/runs").json().get("runs")).hasSize(1);

    // Unkeyed, or without a limit: nothing to say.
    assertThat(only.startWith(Map.of("input", 3)).json().has("admission")).isFalse();
  }

  @Test
  void aStartWhoseInputLacksTheLimitFromPathIsRefusedAndMakesNothing() {
    api.put(
        "/v1/workflows/by-plan/concurrency",
        Map.of("limit", 1, "limitFrom", "$.plan", "limits", Map.of("premium", 3)));
    WorkerClient worker = server.worker("by-plan");
    Api.Response refused =
        worker.startWith(Map.of("input", Map.of("tier", "gold"), "concurrencyKey", "k"));
    assertThat(refused.status()).as(refused.body()).isEqualTo(400);
    assertThat(refused.json().get("detail").asText()).contains("input has no value at $.plan");
    assertThat(api.get("/v1/workflows/by-plan/runs").json().get("runs")).isEmpty();
    Api.Response ok =
        worker.startWith(Map.of("input", Map.of("plan", "premium"), "concurrencyKey", "k"));
    assertThat(ok.json().get("admission").asText()).as(ok.body()).isEqualTo("started");
  }

  @Test
  void aTotalLimitWithWeightsIsSetReadAndItsBadFormsRefused() {
    Api.Response set =
        api.put(
            "/v1/workflows/shared/concurrency",
            Map.of("limit", 5, "totalLimit", 8, "weights", Map.of("acme", 3)));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    JsonNode read = api.get("/v1/workflows/shared/concurrency").json();
    assertThat(read.get("totalLimit").asInt()).isEqualTo(8);
    assertThat(read.get("weights").get("acme").asInt()).isEqualTo(3);

    assertBadField(
        api.put("/v1/workflows/shared/concurrency", Map.of("limit", 5, "totalLimit", 0)),
        "totalLimit");
    assertBadField(
        api.put("/v1/workflows/shared/concurrency", Map.of("limit", 5, "weights", Map.of("a", 2))),
        "weights");
    assertBadField(
        api.put(
            "/v1/workflows/shared/concurrency",
            Map.of("limit", 5, "totalLimit", 8, "weights", Map.of("a", 1001))),
        "weights.a");
    JsonNode kept = api.get("/v1/workflows/shared/concurrency").json();
    assertThat(kept.get("totalLimit").asInt()).isEqualTo(8);
    assertThat(kept.get("weights").get("acme").asInt()).isEqualTo(3);
  }

  @Test
  void underATotalLimitTheBlockersSayTheSlotsAreSharedAndTheKeysPlace() {
    api.put("/v1/workflows/round/concurrency", Map.of("limit", 5, "totalLimit", 1));
    WorkerClient worker = server.worker("round");
    WorkerClient.created(worker.startWith(Map.of("input", 1, "concurrencyKey", "a")));
    long waiting =
        WorkerClient.created(worker.startWith(Map.of("input", 2, "concurrencyKey", "b")));
    assertThat(worker.poll(List.of(1), 10, 0).json().get("tasks")).hasSize(1);
    JsonNode blocker =
        api.get("/v1/workflows/round/runs/" + waiting + "/blockers").json().get("blockers").get(0);
    assertThat(blocker.get("kind").asText()).isEqualTo("concurrency");
    assertThat(blocker.get("shared").asBoolean()).isTrue();
    assertThat(blocker.get("limit").asInt()).isEqualTo(1);
    assertThat(blocker.get("active").asInt()).isEqualTo(1);
    assertThat(blocker.get("position").asInt()).isEqualTo(1);
  }

  @Test
  void aThrottleQueuesStartsForTheirTurnAndItsBadFormsAreRefused() {
    Api.Response set =
        api.put("/v1/workflows/paced/throttle", Map.of("limit", 1, "periodMs", 60_000));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(set.json().get("burst").asInt()).isEqualTo(1);
    WorkerClient worker = server.worker("paced");
    long first = worker.start(1);
    long second = worker.start(2);
    assertThat(
            api.get("/v1/workflows/paced/runs/" + first + "/blockers")
                .json()
                .get("blockers")
                .findValuesAsText("kind"))
        .doesNotContain("throttled");
    JsonNode blocker =
        api.get("/v1/workflows/paced/runs/" + second + "/blockers").json().get("blockers").get(0);
    assertThat(blocker.get("kind").asText()).isEqualTo("throttled");
    assertThat(Instant.parse(blocker.get("until").asText())).isAfter(Instant.now().plusSeconds(50));
    assertThat(worker.poll(List.of(1), 10, 0).json().get("tasks")).hasSize(1);

    assertBadField(
        api.put("/v1/workflows/paced/throttle", Map.of("limit", 0, "periodMs", 1000)), "limit");
    assertBadField(api.put("/v1/workflows/paced/throttle", Map.of("limit", 5)), "periodMs");
    assertBadField(
        api.put("/v1/workflows/paced/throttle", Map.of("limit", 5, "periodMs", 1000, "burst", 0)),
        "burst");
    assertThat(api.get("/v1/workflows/paced/throttle").json().get("periodMs").asLong())
        .isEqualTo(60_000);

    JsonNode audited = api.get("/v1/audit?action=workflow.throttle").json().get("entries");
    assertThat(audited).as("the audit trail has the throttle's change").isNotEmpty();
    Map<String, Object> none = new HashMap<>();
    none.put("limit", null);
    assertThat(api.put("/v1/workflows/paced/throttle", none).status()).isEqualTo(200);
    assertThat(api.get("/v1/workflows/paced/throttle").json().has("limit")).isFalse();
  }
}
