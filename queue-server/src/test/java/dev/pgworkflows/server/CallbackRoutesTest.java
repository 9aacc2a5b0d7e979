package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Callback URLs over HTTP: a worker mints one (a repeat answers the same), a POST without a bearer
 * token completes it once, a forged token is a 404, a used one a 410, a body over 64 KiB a 413, a
 * token tried too often a 429, and the key rotates. Every exchange is checked against openapi.yaml.
 */
class CallbackRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static Api.Response mint(long run, String name) {
    return server
        .api()
        .post(
            "/v1/workflows/cb-http/runs/" + run + "/callbacks/" + name,
            Map.of("timeoutMs", 60_000));
  }

  @Test
  void aMintedCallbackIsCompletedOnceWithoutABearerToken() {
    WorkerClient worker = server.worker("cb-http");
    long run = worker.start(1);
    Api.Response minted = mint(run, "approval");
    assertThat(minted.status()).as(minted.body()).isEqualTo(201);
    String token = minted.json().get("token").asText();
    assertThat(minted.json().get("url").asText()).endsWith("/v1/callbacks/" + token);
    Api.Response again = mint(run, "approval");
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.json().get("token").asText()).isEqualTo(token);

    Api anonymous = server.api().withToken(null);
    Api.Response done = anonymous.post("/v1/callbacks/" + token, Map.of("approved", true));
    assertThat(done.status()).as(done.body()).isEqualTo(200);
    assertThat(done.json().get("outcome").asText()).isEqualTo("resolved");
    assertThat(done.json().get("runId").asLong()).isEqualTo(run);
    Api.Response twice = anonymous.post("/v1/callbacks/" + token + "/reject", Map.of());
    assertThat(twice.status()).isEqualTo(410);
    assertThat(twice.isProblem()).isTrue();

    Api.Response listed = server.api().get("/v1/workflows/cb-http/runs/" + run + "/callbacks");
    assertThat(listed.json().get("callbacks").get(0).get("outcome").asText()).isEqualTo("resolved");
  }

  @Test
  void badTokensAndBodiesAreRefusedAndChangeNothing() {
    WorkerClient worker = server.worker("cb-http");
    long run = worker.start(2);
    String token = mint(run, "bad-input").json().get("token").asText();
    Api anonymous = server.api().withToken(null);

    Api.Response forged =
        anonymous.post("/v1/callbacks/" + token.replace(".bad-input", ".other"), Map.of());
    assertThat(forged.status()).isEqualTo(404);
    assertThat(forged.json().get("detail").asText()).isEqualTo("no such callback");
    Api.Response big = anonymous.post("/v1/callbacks/" + token, Map.of("pad", "x".repeat(70_000)));
    assertThat(big.status()).isEqualTo(413);
    Api.Response badTimeout =
        server
            .api()
            .post(
                "/v1/workflows/cb-http/runs/" + run + "/callbacks/quick", Map.of("timeoutMs", 10));
    assertThat(badTimeout.status()).isEqualTo(400);
    assertThat(badTimeout.json().get("detail").asText()).startsWith("timeoutMs");
    assertThat(
            server
                .api()
                .get("/v1/workflows/cb-http/runs/" + run + "/callbacks")
                .json()
                .get("callbacks")
                .size())
        .isEqualTo(1);

    String spent = "1.1." + "0".repeat(64) + ".spent";
    int last = 0;
    for (int i = 0; i < 11; i++) {
      last = anonymous.post("/v1/callbacks/" + spent, Map.of()).status();
    }
    assertThat(last).as("the 11th try within a minute").isEqualTo(429);
    assertThat(anonymous.post("/v1/callbacks/" + token, Map.of("ok", 1)).status()).isEqualTo(200);
  }

  @Test
  void theKeyRotatesAndOldTokensStillWork() {
    WorkerClient worker = server.worker("cb-http");
    long run = worker.start(3);
    String before = mint(run, "before").json().get("token").asText();
    Api.Response rotated = server.api().post("/v1/callback-keys", null);
    assertThat(rotated.status()).isEqualTo(201);
    int key = rotated.json().get("keyId").asInt();
    assertThat(mint(run, "after").json().get("token").asText()).startsWith(run + "." + key + ".");
    assertThat(server.api().withToken(null).post("/v1/callbacks/" + before, Map.of()).status())
        .isEqualTo(200);
  }
}
