package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AuthTest {

  @Test
  void withTokensOnlyThoseTokensPass() {
    try (TestServer server = TestServer.start(Map.of("WORKFLOWS_API_TOKENS", "alpha, beta"))) {
      Api api = server.api();
      Api.Response none = api.withToken(null).get("/v1/queues");
      assertThat(none.status()).isEqualTo(401);
      assertThat(none.header("WWW-Authenticate")).startsWith("Bearer");
      assertThat(none.isProblem()).isTrue();
      assertThat(api.withToken("gamma").get("/v1/queues").status()).isEqualTo(401);
      assertThat(api.withToken("alph").get("/v1/queues").status()).isEqualTo(401);
      assertThat(api.withToken("alpha").get("/v1/queues").status()).isEqualTo(200);
      assertThat(api.withToken("beta").get("/v1/queues").status()).isEqualTo(200);
      assertThat(api.withToken("gamma").put("/v1/queues/sneaky", null).status()).isEqualTo(401);
      assertThat(api.withToken("alpha").get("/v1/queues/sneaky").status()).isEqualTo(404);
      assertThat(api.withToken(null).get("/healthz").status()).isEqualTo(200);
      assertThat(api.withToken(null).get("/readyz").status()).isEqualTo(200);
    }
  }

  @Test
  void aRefusedRequestStopsBeforeItsRouteYetIsIdentifiedAndCountedUnderIt() {
    try (TestServer server = TestServer.start(Map.of("WORKFLOWS_API_TOKENS", "alpha"))) {
      Api api = server.api();
      Api.Response refused =
          api.withToken(null)
              .send("GET", "/v1/queues", null, Map.of("X-Request-Id", "refused-request-1"));
      assertThat(refused.status()).isEqualTo(401);
      assertThat(refused.header("X-Request-Id")).isEqualTo("refused-request-1");
      Api.Response sneaky = api.withToken("gamma").put("/v1/queues/sneaky", null);
      assertThat(sneaky.status()).isEqualTo(401);
      assertThat(sneaky.header("X-Request-Id")).isNotBlank();
      assertThat(api.withToken("gamma").get("/v1/queues/sneaky").status()).isEqualTo(401);
      assertThat(api.withToken("alpha").get("/v1/queues/sneaky").status()).isEqualTo(404);
      String metrics = api.withToken(null).get("/metrics").body();
      assertThat(metrics)
          .contains(
              "http_server_requests_seconds_count{method=\"GET\",route=\"/v1/queues\",status=\"401\"} 1")
          .contains(
              "http_server_requests_seconds_count{method=\"PUT\",route=\"/v1/queues/{queue}\",status=\"401\"} 1")
          .contains(
              "http_server_requests_seconds_count{method=\"GET\",route=\"/v1/queues/{queue}\",status=\"401\"} 1")
          .contains(
              "http_server_requests_seconds_count{method=\"GET\",route=\"/v1/queues/{queue}\",status=\"404\"} 1");
    }
  }

  @Test
  void withoutTokensTheHeaderMustStillBePresent() {
    try (TestServer server = TestServer.start()) {
      Api api = server.api();
      assertThat(api.withToken(null).get("/v1/queues").status()).isEqualTo(401);
      assertThat(api.withToken("anything").get("/v1/queues").status()).isEqualTo(200);
      assertThat(
              api.withToken(null)
                  .send("GET", "/v1/queues", null, Map.of("Authorization", "Basic eDp5"))
                  .status())
          .isEqualTo(401);
    }
  }
}
