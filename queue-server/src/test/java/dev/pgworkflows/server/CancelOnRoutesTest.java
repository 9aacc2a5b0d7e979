package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A workflow's cancel-on rules over HTTP: set by a worker and read back, a signal they name answers
 * {@code cancelled}, a publish lists the runs it cancelled, and a bad rule is a 400 naming it that
 * changes nothing. Every exchange is checked against openapi.yaml.
 */
class CancelOnRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Map<String, Object> RULES =
      Map.of(
          "rules",
          List.of(
              Map.of("signal", "abort"),
              Map.of("topic", "carts.*.emptied", "inputFields", List.of("cart"))));

  @Test
  void rulesSetByAWorkerCancelBySignalAndByTopic() {
    WorkerClient worker = server.worker("co-cart");
    Api.Response set = server.api().put("/v1/workflows/co-cart/cancel-on", RULES);
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(server.api().get("/v1/workflows/co-cart/cancel-on").json().get("rules").size())
        .isEqualTo(2);

    long a = worker.start(Map.of("cart", "a"));
    long b = worker.start(Map.of("cart", "b"));
    Api.Response signalled =
        server.api().post("/v1/workflows/co-cart/runs/" + a + "/signals/abort", Map.of());
    assertThat(signalled.json().get("outcome").asText()).isEqualTo("cancelled");
    assertThat(worker.run(a).get("status").asText()).isEqualTo("cancelled");

    Api.Response published =
        server
            .api()
            .post("/v1/topics/carts.eu.emptied/messages", Map.of("body", Map.of("cart", "b")));
    assertThat(published.status()).isEqualTo(201);
    assertThat(published.json().get("cancelled").get(0).get("runId").asLong()).isEqualTo(b);
    assertThat(worker.run(b).get("status").asText()).isEqualTo("cancelled");
  }

  @Test
  void aBadRuleIsA400NamingItAndChangesNothing() {
    server.api().put("/v1/workflows/co-bad/cancel-on", RULES);
    Api.Response bad =
        server
            .api()
            .put(
                "/v1/workflows/co-bad/cancel-on",
                Map.of("rules", List.of(Map.of("signal", "ok"), Map.of("topic", "a..b"))));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.isProblem()).isTrue();
    assertThat(bad.json().get("detail").asText()).startsWith("rules[1].topic");
    assertThat(bad.body()).doesNotContain("SQLException").doesNotContain("queue.");
    Api.Response none = server.api().put("/v1/workflows/co-bad/cancel-on", Map.of());
    assertThat(none.status()).isEqualTo(400);
    assertThat(server.api().get("/v1/workflows/co-bad/cancel-on").json().get("rules").size())
        .isEqualTo(2);
  }
}
