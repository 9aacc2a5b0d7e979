package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.pgworkflows.engine.internal.maintenance.Signatures;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TopicApiTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_DELIVERY_BACKOFF_MS", "50")
          // The receiver below is on loopback, which webhooks may reach only when allowed.
          .and("WORKFLOWS_WEBHOOK_ALLOW", "127.0.0.1");

  private static final Api api = server.api();

  @Test
  void patternsFanOutToQueuesInOnePublish() {
    api.put("/v1/queues/all-orders", null);
    api.put("/v1/queues/eu-created", null);
    api.put("/v1/queues/any-created", null);
    assertThat(
            api.post(
                    "/v1/topics/orders.%23/subscriptions",
                    Map.of("type", "queue", "name", "all-orders"))
                .status())
        .isEqualTo(201);
    assertThat(
            api.post(
                    "/v1/topics/orders.eu.created/subscriptions",
                    Map.of("type", "queue", "name", "eu-created"))
                .status())
        .isEqualTo(201);
    assertThat(
            api.post(
                    "/v1/topics/orders.*.created/subscriptions",
                    Map.of("type", "queue", "name", "any-created"))
                .status())
        .isEqualTo(201);
    assertThat(
            api.post(
                    "/v1/topics/orders.*.created/subscriptions",
                    Map.of("type", "queue", "name", "any-created"))
                .status())
        .isEqualTo(200);

    Api.Response pub =
        api.post("/v1/topics/orders.eu.created/messages", Map.of("body", Map.of("id", 7)));
    assertThat(pub.status()).isEqualTo(201);
    assertThat(pub.json().get("deliveries")).hasSize(3);
    api.post("/v1/topics/orders.us.created/messages", Map.of("body", Map.of("id", 8)));
    api.post("/v1/topics/orders/messages", Map.of("body", Map.of("id", 9)));
    api.post("/v1/topics/orders.eu.created.late/messages", Map.of("body", Map.of("id", 10)));

    assertThat(depth("all-orders")).isEqualTo(4);
    assertThat(depth("eu-created")).isEqualTo(1);
    assertThat(depth("any-created")).isEqualTo(2);
    var msg =
        api.post("/v1/queues/eu-created/messages/receive", null).json().get("messages").get(0);
    assertThat(msg.get("headers").get("topic").asText()).isEqualTo("orders.eu.created");

    var subs = api.get("/v1/topics/orders.*.created/subscriptions").json().get("subscriptions");
    assertThat(subs).hasSize(1);
    long id = subs.get(0).get("id").asLong();
    assertThat(api.delete("/v1/topics/orders.*.created/subscriptions/" + id).status())
        .isEqualTo(204);
    assertThat(api.delete("/v1/topics/orders.*.created/subscriptions/" + id).status())
        .isEqualTo(404);
  }

  @Test
  void badSubscriptionsAreRejected() {
    assertThat(
            api.post("/v1/topics/a.%23.b/subscriptions", Map.of("type", "queue", "name", "x"))
                .status())
        .isEqualTo(400);
    assertThat(
            api.post(
                    "/v1/topics/a.b/subscriptions",
                    Map.of("type", "queue", "name", "no-such-queue"))
                .status())
        .isEqualTo(404);
    assertThat(
            api.post("/v1/topics/a.b/subscriptions", Map.of("type", "carrier-pigeon", "name", "x"))
                .status())
        .isEqualTo(400);
    assertThat(
            api.post("/v1/topics/a.b/subscriptions", Map.of("type", "https", "url", "http://plain"))
                .status())
        .isEqualTo(400);
    assertThat(
            api.post(
                    "/v1/topics/a.b/subscriptions",
                    Map.of("type", "http", "url", "http://x", "secret", "short"))
                .status())
        .isEqualTo(400);
    assertThat(api.post("/v1/topics/A.B/messages", Map.of("body", 1)).status()).isEqualTo(400);
  }

  @Test
  void httpSubscribersGetSignedDeliveriesRetriedAfterA500() throws Exception {
    String secret = "0123456789abcdef-secret";
    List<String> verified = new CopyOnWriteArrayList<>();
    AtomicInteger calls = new AtomicInteger();
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext(
        "/hook",
        ex -> {
          byte[] body = ex.getRequestBody().readAllBytes();
          int n = calls.incrementAndGet();
          String id = ex.getRequestHeaders().getFirst("Webhook-Id");
          long ts = Long.parseLong(ex.getRequestHeaders().getFirst("Webhook-Timestamp"));
          String sig = ex.getRequestHeaders().getFirst("Webhook-Signature");
          boolean valid = Signatures.sign(secret, id, ts, body).equals(sig);
          int status = n == 1 ? 500 : 204;
          if (status == 204 && valid) {
            verified.add(new String(body, StandardCharsets.UTF_8));
          }
          ex.sendResponseHeaders(status, -1);
          ex.close();
        });
    receiver.start();
    try {
      String url = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
      Api.Response sub =
          api.post(
              "/v1/topics/users.*/subscriptions",
              Map.of("type", "http", "url", url, "secret", secret));
      assertThat(sub.status()).isEqualTo(201);
      assertThat(sub.json().get("signed").asBoolean()).isTrue();
      assertThat(sub.json().has("secret")).isFalse();
      api.post("/v1/topics/users.signup/messages", Map.of("body", Map.of("user", 42)));
      Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> !verified.isEmpty());
      assertThat(calls.get()).isEqualTo(2);
      assertThat(Api.JSON.readTree(verified.get(0)).get("user").asInt()).isEqualTo(42);
    } finally {
      receiver.stop(0);
    }
  }

  private static long depth(String queue) {
    return api.get("/v1/queues/" + queue).json().get("metrics").get("depth").asLong();
  }

  @Test
  void aBatchingWorkflowSubscriptionStartsOneRunPerBatchAndRefusesBadSettings() {
    Api.Response sub =
        api.post(
            "/v1/topics/visits.%23/subscriptions",
            Map.of(
                "type",
                "workflow",
                "name",
                "visits",
                "batch",
                Map.of("maxSize", 2, "timeoutMs", 600_000, "key", "$.site")));
    assertThat(sub.status()).as(sub.body()).isEqualTo(201);
    assertThat(sub.json().get("batch").get("maxSize").asInt()).isEqualTo(2);
    assertThat(sub.json().get("batch").get("key").asText()).isEqualTo("$.site");

    Api.Response a1 =
        api.post("/v1/topics/visits.home/messages", Map.of("body", Map.of("site", "a")));
    assertThat(a1.json().at("/deliveries/0/type").asText()).as(a1.body()).isEqualTo("batched");
    Api.Response b1 =
        api.post("/v1/topics/visits.home/messages", Map.of("body", Map.of("site", "b")));
    assertThat(b1.json().at("/deliveries/0/type").asText()).isEqualTo("batched");
    Api.Response a2 =
        api.post("/v1/topics/visits.cart/messages", Map.of("body", Map.of("site", "a")));
    assertThat(a2.json().at("/deliveries/0/type").asText()).isEqualTo("workflow");
    long run = a2.json().at("/deliveries/0/id").asLong();
    assertThat(api.get("/v1/workflows/visits/runs/" + run).json().get("input").size()).isEqualTo(2);

    for (Map<String, Object> bad :
        List.<Map<String, Object>>of(
            Map.of("maxSize", 0, "timeoutMs", 1000),
            Map.of("maxSize", 100_000, "timeoutMs", 1000),
            Map.of("maxSize", 10))) {
      Api.Response refused =
          api.post(
              "/v1/topics/visits.%23/subscriptions",
              Map.of("type", "workflow", "name", "other", "batch", bad));
      assertThat(refused.status()).as(refused.body()).isEqualTo(400);
      assertThat(refused.json().get("field").asText()).startsWith("batch.");
    }
    Api.Response onQueue =
        api.post(
            "/v1/topics/visits.%23/subscriptions",
            Map.of("type", "queue", "name", "q", "batch", Map.of("maxSize", 2, "timeoutMs", 10)));
    assertThat(onQueue.json().get("field").asText()).isEqualTo("batch");
    Api.Response badKey =
        api.post(
            "/v1/topics/visits.%23/subscriptions",
            Map.of(
                "type",
                "workflow",
                "name",
                "other",
                "batch",
                Map.of("maxSize", 2, "timeoutMs", 10, "key", "$.[")));
    assertThat(badKey.status()).isEqualTo(400);
    assertThat(badKey.json().get("detail").asText()).contains("batch.key is not a JSON path");
    assertThat(api.get("/v1/topics/visits.%23/subscriptions").json().get("subscriptions"))
        .hasSize(1);
  }
}
