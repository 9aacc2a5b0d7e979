package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Bad input gets a 4xx problem+json and changes nothing. */
class BadInputTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_MAX_BODY_BYTES", "65536");

  private static final Api api = server.api();

  @BeforeAll
  static void createTheTargetQueue() {
    api.put("/v1/queues/target", null);
  }

  private static void assertProblem(Api.Response r, int status) {
    assertThat(r.status()).as(r.body()).isEqualTo(status);
    assertThat(r.isProblem()).as("problem+json: %s", r.body()).isTrue();
    assertThat(r.json().get("detail").asText()).isNotBlank();
  }

  private static long depth() {
    return api.get("/v1/queues/target").json().get("metrics").get("depth").asLong();
  }

  private static int queueCount() {
    return api.get("/v1/queues").json().get("queues").size();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "a\";drop table x;--",
        "Upper",
        "ünïcode",
        "-dash",
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghi",
        "semi;colon",
        "quote'"
      })
  void hostileQueueNames(String name) {
    int before = queueCount();
    String path =
        "/v1/queues/" + URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    Api.Response r = api.put(path, null);
    assertProblem(r, 400);
    assertThat(r.json().get("field").asText()).isEqualTo("queue");
    assertProblem(api.post(path + "/messages", Map.of("body", 1)), 400);
    assertThat(queueCount()).isEqualTo(before);
  }

  @Test
  void malformedAndHostileBodies() {
    long before = depth();
    assertProblem(api.post("/v1/queues/target/messages", "{not json"), 400);
    assertProblem(api.post("/v1/queues/target/messages", "{\"body\": 1} trailing"), 400);
    assertProblem(api.post("/v1/queues/target/messages", "{\"body\": 1, \"body\": 2}"), 400);
    assertProblem(api.post("/v1/queues/target/messages", "{\"body\": \"\\u0000\"}"), 400);
    assertProblem(
        api.post("/v1/queues/target/messages", "[".repeat(10_000) + "]".repeat(10_000)), 400);
    String deep = "{\"body\":" + "[".repeat(10_000) + "]".repeat(10_000) + "}";
    assertProblem(api.post("/v1/queues/target/messages", deep), 400);
    assertProblem(api.post("/v1/queues/target/messages", Map.of("body", 1, "surprise", true)), 400);
    assertProblem(api.post("/v1/queues/target/messages", Map.of("headers", Map.of())), 400);
    assertProblem(
        api.post("/v1/queues/target/messages", Map.of("body", 1, "delaySeconds", -1)), 400);
    assertProblem(
        api.post("/v1/queues/target/messages", "{\"body\":1,\"delaySeconds\":1e30}"), 400);
    assertProblem(api.post("/v1/queues/target/messages", "{\"body\":1,\"delaySeconds\":1.5}"), 400);
    assertProblem(
        api.post("/v1/queues/target/messages", "{\"body\":1,\"delaySeconds\":99999999999}"), 400);
    assertProblem(
        api.post("/v1/queues/target/messages", Map.of("body", 1, "headers", "nope")), 400);
    assertProblem(api.post("/v1/queues/target/messages", "null"), 400);
    assertProblem(api.post("/v1/queues/target/messages", ""), 400);
    assertProblem(api.post("/v1/queues/target/messages/receive", Map.of("waitSeconds", 31)), 400);
    assertProblem(api.post("/v1/queues/target/messages/receive", Map.of("max", 0)), 400);
    assertProblem(api.delete("/v1/queues/target/messages/abc"), 400);
    assertProblem(api.delete("/v1/queues/target/messages/-4"), 400);
    assertProblem(api.get("/v1/queues/target/dead-letters?limit=0"), 400);
    assertThat(depth()).isEqualTo(before);
  }

  @Test
  void bodiesOverTheLimitAre413() {
    long before = depth();
    String big = "{\"body\":\"" + "x".repeat(70_000) + "\"}";
    assertProblem(api.post("/v1/queues/target/messages", big), 413);
    assertThat(depth()).isEqualTo(before);
  }

  @Test
  void oversizedHeadersAreRefused() {
    long before = depth();
    Api.Response r =
        api.send(
            "POST",
            "/v1/queues/target/messages",
            Map.of("body", 1),
            Map.of("X-Big", "x".repeat(64 * 1024)));
    assertThat(r.status()).isEqualTo(431);
    assertThat(r.isProblem()).as(r.body()).isTrue();
    assertThat(depth()).isEqualTo(before);
    assertThat(api.withToken(null).get("/healthz").status()).isEqualTo(200);
  }

  @Test
  void unknownRoutesAndMethods() {
    assertProblem(api.get("/v1/nothing-here"), 404);
    assertProblem(api.post("/v1/queues/nope/messages", Map.of("body", 1)), 404);
  }
}
