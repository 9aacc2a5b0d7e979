package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Updates over HTTP, with a worker written from the protocol: a caller's update waits for the
 * worker's answer, which the update task's take and answer make; a refusal is a 409 naming why; a
 * repeat with the same key gets the first answer; bad input is a 400 naming the field. Every
 * exchange is checked against openapi.yaml.
 */
class UpdateRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static String run(WorkerClient w, long run) {
    return "/v1/workflows/" + w.workflow() + "/runs/" + run;
  }

  /** Polls the run's first task and hands it back to sleep for an hour. */
  private static void sleepAnHour(WorkerClient w) {
    JsonNode task = w.pollOne();
    Api.Response slept =
        w.complete(
            task,
            Map.of("step", WorkerClient.step("load", 1), "next", Map.of("delayMs", 3_600_000)));
    assertThat(slept.status()).as(slept.body()).isEqualTo(200);
  }

  /** Answers the next task (an update task) of {@code w}'s workflow with {@code answer}. */
  private static Api.Response answerNext(WorkerClient w, Map<String, Object> answer) {
    return w.answerUpdate(w.pollOne(), answer);
  }

  @Test
  void aCallerWaitsForTheWorkersAnswer() throws Exception {
    WorkerClient w = server.worker("upd-http");
    long id = w.start(1);
    sleepAnHour(w);
    CompletableFuture<Api.Response> sent =
        CompletableFuture.supplyAsync(
            () ->
                server
                    .api()
                    .post(
                        run(w, id) + "/updates/addItem",
                        Map.of("input", Map.of("sku", "tea"), "waitSeconds", 20)));
    Api.Response answered =
        answerNext(
            w,
            Map.of(
                "status", "completed", "output", Map.of("items", 1), "state", Map.of("items", 1)));
    assertThat(answered.status()).as(answered.body()).isEqualTo(200);
    assertThat(answered.json().get("outcome").asText()).isEqualTo("ok");

    Api.Response r = sent.get();
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("status").asText()).isEqualTo("completed");
    assertThat(r.json().get("output").get("items").asInt()).isEqualTo(1);
    long updateId = r.json().get("updateId").asLong();

    assertThat(w.journal(id)).containsExactly("load", "__update." + updateId);
    Api.Response read = server.api().get(run(w, id) + "/update-results/" + updateId);
    assertThat(read.status()).isEqualTo(200);
    assertThat(
            server
                .api()
                .get(run(w, id) + "/updates")
                .json()
                .get("updates")
                .get(0)
                .get("status")
                .asText())
        .isEqualTo("completed");
  }

  @Test
  void aRefusalIsAConflictNamingWhyAndAKeyAnswersTheFirstUpdate() {
    WorkerClient w = server.worker("upd-http");
    long id = w.start(2);
    sleepAnHour(w);
    CompletableFuture<Api.Response> waiting =
        CompletableFuture.supplyAsync(
            () ->
                server
                    .api()
                    .send(
                        "POST",
                        run(w, id) + "/updates/addItem",
                        Map.of("input", Map.of("sku", ""), "waitSeconds", 20),
                        Map.of("Idempotency-Key", "add-1")));
    answerNext(w, Map.of("status", "refused", "error", Map.of("message", "sku is empty")));
    Api.Response refused = waiting.join();
    assertThat(refused.status()).as(refused.body()).isEqualTo(409);
    assertThat(refused.json().get("detail").asText())
        .isEqualTo("update addItem was refused: sku is empty");
    Api.Response again =
        server
            .api()
            .send(
                "POST",
                run(w, id) + "/updates/addItem",
                Map.of("input", Map.of("sku", "other")),
                Map.of("Idempotency-Key", "add-1"));
    assertThat(again.status()).isEqualTo(409);
    assertThat(again.isProblem()).isTrue();
    assertThat(again.json().get("detail").asText())
        .isEqualTo("update addItem was refused: sku is empty");
    assertThat(w.journal(id)).as("a refusal journals nothing").containsExactly("load");
  }

  @Test
  void badInputIsRefusedAndChangesNothing() {
    WorkerClient w = server.worker("upd-http");
    long id = w.start(3);
    Api.Response badName = server.api().post(run(w, id) + "/updates/no%20spaces", Map.of());
    assertThat(badName.status()).isEqualTo(400);
    assertThat(badName.json().get("detail").asText()).startsWith("update");
    Api.Response badWait =
        server.api().post(run(w, id) + "/updates/addItem", Map.of("waitSeconds", 61));
    assertThat(badWait.status()).isEqualTo(400);
    assertThat(badWait.json().get("detail").asText()).startsWith("waitSeconds");
    Api.Response unknownField =
        server.api().post(run(w, id) + "/updates/addItem", Map.of("inputs", 1));
    assertThat(unknownField.status()).isEqualTo(400);
    assertThat(
            server
                .api()
                .post("/v1/workflows/upd-http/runs/999999/updates/addItem", Map.of())
                .status())
        .isEqualTo(404);
    assertThat(server.api().get(run(w, id) + "/updates").json().get("updates")).isEmpty();

    JsonNode task = w.pollOne();
    Api.Response pending = server.api().post(run(w, id) + "/updates/addItem", Map.of());
    assertThat(pending.status()).as("no wait: answered pending").isEqualTo(202);
    long updateId = pending.json().get("updateId").asLong();
    assertThat(
            w.complete(task, Map.of("result", Map.of("status", "completed", "output", 1))).status())
        .isEqualTo(200);
    Api.Response ended = server.api().post(run(w, id) + "/updates/addItem", Map.of());
    assertThat(ended.status()).isEqualTo(409);
    assertThat(ended.json().get("detail").asText()).contains("takes no update");
    Api.Response dropped = server.api().get(run(w, id) + "/update-results/" + updateId);
    assertThat(dropped.status()).isEqualTo(409);
    assertThat(dropped.json().get("detail").asText()).contains("ended before it answered");
    Api.Response stale =
        server
            .api()
            .post(
                run(w, id) + "/update-task",
                Map.of(
                    "messageId",
                    task.get("messageId").asLong(),
                    "receipt",
                    task.get("receipt").asText()));
    assertThat(stale.status()).isEqualTo(409);
  }

  @Test
  void anUpdateWithStartMakesTheRunOnceAndARepeatFindsIt() {
    Map<String, Object> body =
        Map.of(
            "start", Map.of("input", Map.of("customer", "ada"), "idempotencyKey", "cart-ada"),
            "update", "addItem",
            "input", Map.of("sku", "tea"));
    Api.Response first = server.api().post("/v1/workflows/upd-start/update-with-start", body);
    assertThat(first.status()).as(first.body()).isEqualTo(202);
    assertThat(first.json().get("runCreated").asBoolean()).isTrue();
    long run = first.json().get("runId").asLong();
    Api.Response again = server.api().post("/v1/workflows/upd-start/update-with-start", body);
    assertThat(again.json().get("runCreated").asBoolean()).isFalse();
    assertThat(again.json().get("runId").asLong()).isEqualTo(run);
    assertThat(
            server
                .api()
                .get("/v1/workflows/upd-start/runs/" + run + "/updates")
                .json()
                .get("updates"))
        .hasSize(2);

    Api.Response keyless =
        server
            .api()
            .post(
                "/v1/workflows/upd-start/update-with-start",
                Map.of("start", Map.of("input", 1), "update", "addItem"));
    assertThat(keyless.status()).isEqualTo(400);
    assertThat(keyless.json().get("detail").asText()).startsWith("start.idempotencyKey");
    assertThat(server.api().get("/v1/workflows/upd-start/runs").json().get("runs")).hasSize(1);
  }
}
