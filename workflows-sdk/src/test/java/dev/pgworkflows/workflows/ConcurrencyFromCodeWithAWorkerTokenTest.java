package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A definition's concurrency limit is set by a worker whose token has scope {@code worker} only, on
 * a server that requires tokens; that token still cannot change limits as an operator does.
 */
class ConcurrencyFromCodeWithAWorkerTokenTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with(
          "WORKFLOWS_API_TOKENS", "ops:admin,read,start=ops-token;fleet:worker=worker-token");

  @Test
  void aWorkerWithAWorkerTokenSetsItsDefinitionsLimitAndServes() {
    Workflow<String, String> wf =
        Workflow.define("limited", String.class, String.class)
            .concurrency(2)
            .run((ctx, in) -> ctx.step().run("echo", String.class, () -> in));
    Api ops = server.api().withToken("ops-token");
    Api fleet = server.api().withToken("worker-token");
    Worker worker =
        wf.serve(
            WorkerOptions.url(server.url()).token("worker-token").pollWait(Duration.ofSeconds(1)));
    try {
      Api.Response limit = ops.get("/v1/workflows/limited/concurrency");
      assertThat(limit.status()).as(limit.body()).isEqualTo(200);
      assertThat(limit.json().get("limit").asInt()).isEqualTo(2);

      WorkflowClient client = WorkflowClient.connect(server.url(), "ops-token");
      long run = client.start(wf, "hi", StartOptions.builder().concurrencyKey("k").build()).runId();
      assertThat(client.runs().awaitResult("limited", run, String.class, Duration.ofSeconds(30)))
          .isEqualTo("hi");
    } finally {
      worker.close();
    }

    Api.Response asOperator = fleet.put("/v1/workflows/limited/concurrency", Map.of("limit", 9));
    assertThat(asOperator.status()).as(asOperator.body()).isEqualTo(403);
    Api.Response tooHigh =
        fleet.put("/v1/workflows/limited/code-concurrency", Map.of("limit", 100_001));
    assertThat(tooHigh.status()).as(tooHigh.body()).isEqualTo(400);
    assertThat(tooHigh.json().get("detail").asText()).contains("limit");
    Api.Response none = fleet.put("/v1/workflows/limited/code-concurrency", Map.of());
    assertThat(none.status()).as(none.body()).isEqualTo(400);
    assertThat(ops.get("/v1/workflows/limited/concurrency").json().get("limit").asInt())
        .isEqualTo(2);

    Api.Response changed = fleet.put("/v1/workflows/limited/code-concurrency", Map.of("limit", 5));
    assertThat(changed.status()).as(changed.body()).isEqualTo(200);
    assertThat(changed.json().get("workflow").asText()).isEqualTo("limited");
    assertThat(ops.get("/v1/workflows/limited/concurrency").json().get("limit").asInt())
        .isEqualTo(5);
  }
}
