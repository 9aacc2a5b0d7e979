package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A run's retrying step over HTTP: a worker hands back a failed attempt naming its step and error;
 * an operator reads it, pauses its retries (the task is not handed out, the blockers say why),
 * resumes them, resets the attempts counted and sets options the next task carries. Bad input and a
 * step that is not retrying change nothing; each action is audited; every exchange is checked
 * against openapi.yaml.
 */
@Timeout(60)
class StepRetryRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static String stepPath(long run, String step) {
    return "/v1/workflows/pay/runs/" + run + "/steps/" + step;
  }

  /** Hands {@code task} back as a failed attempt of step charge, due after {@code delayMs}. */
  private static void fail(WorkerClient worker, JsonNode task, long delayMs) {
    Api.Response r =
        api.post(
            "/v1/workflows/pay/runs/" + task.get("runId").asLong() + "/retry",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "delayMs", delayMs,
                "step", "charge",
                "error", Map.of("type", "IOException", "message", "card declined")));
    assertThat(r.json().get("outcome").asText()).as(r.body()).isEqualTo("ok");
  }

  private static JsonNode tasks(WorkerClient worker) {
    Api.Response r = worker.poll(List.of(1), 10, 0);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().get("tasks");
  }

  private static JsonNode ok(Api.Response r) {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json();
  }

  @Test
  void anOperatorPausesResumesResetsAndSetsOptionsOfARetryingStep() {
    WorkerClient worker = server.worker("pay");
    long run = worker.start(1);
    fail(worker, worker.pollOne(), 60_000);

    JsonNode retry = ok(api.get(stepPath(run, "charge") + "/retry"));
    assertThat(retry.get("attempt").asInt()).isEqualTo(1);
    assertThat(retry.get("state").asText()).isEqualTo("backoff");
    assertThat(retry.get("error").get("message").asText()).isEqualTo("card declined");
    JsonNode blockers = ok(api.get("/v1/workflows/pay/runs/" + run + "/blockers"));
    assertThat(blockers.get("blockers").get(0).get("kind").asText()).isEqualTo("retrying");
    assertThat(blockers.get("blockers").get(0).get("text").asText())
        .startsWith("attempt 1 of step \"charge\" failed (card declined); the next attempt is due");

    // Paused: not handed out, whatever its backoff; the blockers say why.
    JsonNode paused = ok(api.post(stepPath(run, "charge") + "/pause", null));
    assertThat(paused.get("state").asText()).isEqualTo("paused");
    assertThat(paused.get("pausedAt").isTextual()).isTrue();
    blockers = ok(api.get("/v1/workflows/pay/runs/" + run + "/blockers"));
    assertThat(blockers.get("blockers").findValuesAsText("kind")).containsExactly("step_paused");
    assertThat(ok(api.post(stepPath(run, "charge") + "/reset", null)).get("attempt").asInt())
        .isZero();
    assertThat(tasks(worker)).isEmpty();

    // Resumed: due now, its first attempt again after the reset.
    assertThat(ok(api.post(stepPath(run, "charge") + "/resume", null)).get("paused").asBoolean())
        .isFalse();
    JsonNode task = worker.pollOne();
    assertThat(task.get("attempt").asInt()).isEqualTo(1);
    assertThat(task.has("stepOptions")).isFalse();
    fail(worker, task, 60_000);

    // Options: a bad one is refused and changes nothing; good ones go with the next task.
    Api.Response bad = api.put(stepPath(run, "charge") + "/options", Map.of("attempts", 0));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().get("detail").asText())
        .contains("attempts must be between 1 and 1000, got 0");
    bad = api.put(stepPath(run, "charge") + "/options", Map.of("jitter", 0.5));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().get("detail").asText()).contains("options.jitter is not an option");
    bad = api.put(stepPath(run, "charge") + "/options", List.of(1));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(ok(api.get(stepPath(run, "charge") + "/retry")).has("options")).isFalse();
    JsonNode set =
        ok(
            api.put(
                stepPath(run, "charge") + "/options",
                Map.of("attempts", 10, "backoff", "fixed", "timeoutMs", 500)));
    assertThat(set.get("options").get("attempts").asInt()).isEqualTo(10);
    ok(api.post(stepPath(run, "charge") + "/reset", null));
    task = worker.pollOne();
    assertThat(task.get("attempt").asInt()).isEqualTo(1);
    assertThat(task.get("stepOptions"))
        .isEqualTo(
            Api.JSON.valueToTree(
                Map.of("step", "charge", "attempts", 10, "backoff", "fixed", "timeoutMs", 500)));

    // Reset while the attempt is out with the worker: refused.
    Api.Response busy = api.post(stepPath(run, "charge") + "/reset", null);
    assertThat(busy.status()).isEqualTo(409);
    assertThat(busy.json().get("detail").asText()).contains("is out with a worker");

    JsonNode audit = ok(api.get("/v1/audit")).get("entries");
    List<String> actions = audit.findValuesAsText("action");
    assertThat(actions)
        .contains("step.pause", "step.resume", "step.reset", "step.options")
        .doesNotContain("step.retry");
    for (JsonNode e : audit) {
      if (e.get("action").asText().startsWith("step.")) {
        assertThat(e.get("target").asText()).isEqualTo("pay/" + run + "/charge");
      }
    }
  }

  @Test
  void aStepThatIsNotRetryingOrARunThatDoesNotExistIsRefused() {
    WorkerClient worker = server.worker("pay");
    long run = worker.start(2);
    Api.Response r = api.post(stepPath(run, "charge") + "/pause", null);
    assertThat(r.status()).isEqualTo(409);
    assertThat(r.json().get("detail").asText())
        .contains("run " + run + " is not retrying step \"charge\"");
    r = api.get(stepPath(run + 1000, "charge") + "/retry");
    assertThat(r.status()).isEqualTo(404);
    r = api.get("/v1/workflows/other/runs/" + run + "/steps/charge/retry");
    assertThat(r.status()).isEqualTo(404);
    r = api.post(stepPath(run, "bad!") + "/pause", null);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("detail").asText()).contains("step must be a step name");

    // A retry naming a bad step, or with an error that is not an object, changes nothing.
    JsonNode task = worker.pollOne();
    Map<String, Object> body =
        Map.of(
            "messageId",
            task.get("messageId").asLong(),
            "receipt",
            task.get("receipt").asText(),
            "delayMs",
            0,
            "step",
            "charge",
            "error",
            "declined");
    r = api.post("/v1/workflows/pay/runs/" + run + "/retry", body);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.json().get("detail").asText()).contains("error must be an object");
    assertThat(api.get(stepPath(run, "charge") + "/retry").status()).isEqualTo(409);
  }
}
