package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class QueueApiTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  @Test
  void createGetListAndDropAQueue() {
    Api.Response created =
        api.put("/v1/queues/jobs", Map.of("fifo", true, "visibilityTimeoutSeconds", 10));
    assertThat(created.status()).isEqualTo(201);
    assertThat(created.json().get("name").asText()).isEqualTo("jobs");
    assertThat(created.json().get("fifo").asBoolean()).isTrue();
    assertThat(created.json().get("metrics").get("depth").asLong()).isZero();

    assertThat(
            api.put("/v1/queues/jobs", Map.of("fifo", true, "visibilityTimeoutSeconds", 10))
                .status())
        .isEqualTo(200);
    Api.Response conflict = api.put("/v1/queues/jobs", Map.of("fifo", false));
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(conflict.isProblem()).isTrue();
    assertThat(conflict.json().get("detail").asText()).contains("already exists");

    assertThat(api.get("/v1/queues").json().get("queues").findValuesAsText("name"))
        .contains("jobs");
    assertThat(api.get("/v1/queues/jobs").status()).isEqualTo(200);
    assertThat(api.delete("/v1/queues/jobs").status()).isEqualTo(204);
    Api.Response gone = api.get("/v1/queues/jobs");
    assertThat(gone.status()).isEqualTo(404);
    assertThat(gone.isProblem()).isTrue();
    assertThat(api.delete("/v1/queues/jobs").status()).isEqualTo(404);
  }

  @Test
  void sendReceiveAndDeleteMessages() {
    api.put("/v1/queues/mail", null);
    Api.Response sent =
        api.post(
            "/v1/queues/mail/messages",
            Map.of("body", Map.of("to", "a@b.c"), "headers", Map.of("trace", "t-1")));
    assertThat(sent.status()).isEqualTo(201);
    long id = sent.json().get("ids").get(0).asLong();

    Api.Response got = api.post("/v1/queues/mail/messages/receive", Map.of("max", 5));
    assertThat(got.status()).isEqualTo(200);
    var msg = got.json().get("messages").get(0);
    assertThat(msg.get("id").asLong()).isEqualTo(id);
    assertThat(msg.get("readCount").asInt()).isEqualTo(1);
    assertThat(msg.get("body").get("to").asText()).isEqualTo("a@b.c");
    assertThat(msg.get("headers").get("trace").asText()).isEqualTo("t-1");

    assertThat(api.delete("/v1/queues/mail/messages/" + id).status()).isEqualTo(204);
    assertThat(api.delete("/v1/queues/mail/messages/" + id).status()).isEqualTo(404);
  }

  @Test
  void batchSendAndBatchDelete() {
    api.put("/v1/queues/batchq", Map.of("fifo", true));
    Api.Response sent =
        api.post(
            "/v1/queues/batchq/messages",
            Map.of(
                "messages",
                List.of(
                    Map.of("body", 1, "groupId", "g"),
                    Map.of("body", 2, "groupId", "g"),
                    Map.of("body", 3, "delaySeconds", 0))));
    assertThat(sent.status()).isEqualTo(201);
    List<Long> ids =
        Api.JSON.convertValue(
            sent.json().get("ids"),
            new com.fasterxml.jackson.core.type.TypeReference<List<Long>>() {});
    assertThat(ids).hasSize(3);
    var received =
        api.post("/v1/queues/batchq/messages/receive", Map.of("max", 10)).json().get("messages");
    assertThat(received).hasSize(2); // the group's second message waits behind its first
    Api.Response del =
        api.post("/v1/queues/batchq/messages/delete", Map.of("ids", List.of(ids.get(0), 424242)));
    assertThat(del.status()).isEqualTo(200);
    assertThat(del.json().get("results").get(0).get("deleted").asBoolean()).isTrue();
    assertThat(del.json().get("results").get(1).get("deleted").asBoolean()).isFalse();
    var next =
        api.post("/v1/queues/batchq/messages/receive", Map.of("max", 10)).json().get("messages");
    assertThat(next.get(0).get("id").asLong()).isEqualTo(ids.get(1));
  }

  @Test
  void visibilityPurgeAndMetrics() {
    api.put("/v1/queues/vis", Map.of("visibilityTimeoutSeconds", 300));
    long id =
        api.post("/v1/queues/vis/messages", Map.of("body", "x")).json().get("ids").get(0).asLong();
    assertThat(api.post("/v1/queues/vis/messages/receive", null).json().get("messages")).hasSize(1);
    assertThat(api.post("/v1/queues/vis/messages/receive", null).json().get("messages")).isEmpty();
    Api.Response vis =
        api.post(
            "/v1/queues/vis/messages/" + id + "/visibility", Map.of("visibilityTimeoutSeconds", 0));
    assertThat(vis.status()).isEqualTo(200);
    assertThat(vis.json().get("visibleAt").asText()).isNotEmpty();
    assertThat(
            api.post("/v1/queues/vis/messages/receive", null)
                .json()
                .get("messages")
                .get(0)
                .get("readCount")
                .asInt())
        .isEqualTo(2);
    assertThat(
            api.post(
                    "/v1/queues/vis/messages/999999/visibility",
                    Map.of("visibilityTimeoutSeconds", 0))
                .status())
        .isEqualTo(404);
    assertThat(api.get("/v1/queues/vis").json().get("metrics").get("inFlight").asLong())
        .isEqualTo(1);
    assertThat(api.post("/v1/queues/vis/purge", null).json().get("purged").asLong()).isEqualTo(1);
  }

  @Test
  void deadLettersCanBeListedAndRedriven() {
    api.put("/v1/queues/dl", Map.of("visibilityTimeoutSeconds", 0, "maxReceives", 1));
    api.post("/v1/queues/dl/messages", Map.of("body", Map.of("n", 1)));
    assertThat(api.post("/v1/queues/dl/messages/receive", null).json().get("messages")).hasSize(1);
    assertThat(api.post("/v1/queues/dl/messages/receive", null).json().get("messages")).isEmpty();
    var dead = api.get("/v1/queues/dl/dead-letters").json().get("deadLetters");
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).get("body").get("n").asInt()).isEqualTo(1);
    assertThat(api.post("/v1/queues/dl/dead-letters/redrive", null).json().get("redriven").asLong())
        .isEqualTo(1);
    assertThat(api.get("/v1/queues/dl/dead-letters").json().get("deadLetters")).isEmpty();
    assertThat(api.post("/v1/queues/dl/messages/receive", null).json().get("messages")).hasSize(1);
  }

  @Test
  void conditionalReceive() {
    api.put("/v1/queues/cond", null);
    api.post("/v1/queues/cond/messages", Map.of("body", Map.of("kind", "a")));
    api.post("/v1/queues/cond/messages", Map.of("body", Map.of("kind", "b")));
    var got =
        api.post(
                "/v1/queues/cond/messages/receive", Map.of("max", 10, "match", Map.of("kind", "b")))
            .json()
            .get("messages");
    assertThat(got).hasSize(1);
    assertThat(got.get(0).get("body").get("kind").asText()).isEqualTo("b");
  }

  @Test
  void healthAndReadiness() {
    Api.Response health = api.withToken(null).get("/healthz");
    assertThat(health.status()).isEqualTo(200);
    Api.Response ready = api.withToken(null).get("/readyz");
    assertThat(ready.status()).isEqualTo(200);
    assertThat(ready.json().get("schemaVersion").asInt())
        .isEqualTo(ready.json().get("expectedSchemaVersion").asInt());
  }

  @Test
  void responsesCarryARequestId() {
    Api.Response r = api.send("GET", "/v1/queues", null, Map.of("X-Request-Id", "abc-123"));
    assertThat(r.header("X-Request-Id")).isEqualTo("abc-123");
    Api.Response missing = api.get("/v1/queues/nope");
    assertThat(missing.json().get("requestId").asText()).isEqualTo(missing.header("X-Request-Id"));
  }
}
