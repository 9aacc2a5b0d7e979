package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A step's or a run's error is an object with a string type and message (a stack and the failing
 * step by convention): anything else is refused, so every client can show what failed.
 */
class ErrorShapeTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  @Test
  void anErrorNeedsATypeAndAMessage() {
    WorkerClient worker = server.worker("failing");
    long run = worker.start(1);
    JsonNode task = worker.pollUntil(1).get(run);

    Api.Response noType =
        worker.complete(
            task,
            Map.of(
                "step",
                Map.of("name", "a", "kind", "run", "error", Map.of("message", "boom")),
                "next",
                Map.of("inline", true)));
    assertThat(noType.status()).as(noType.body()).isEqualTo(400);
    assertThat(noType.json().get("field").asText()).isEqualTo("step.error");
    Api.Response notText =
        worker.complete(
            task,
            Map.of(
                "result", Map.of("status", "failed", "error", Map.of("type", "E", "message", 42))));
    assertThat(notText.status()).as(notText.body()).isEqualTo(400);
    assertThat(notText.json().get("field").asText()).isEqualTo("result.error");
    assertThat(worker.journal(run)).isEmpty();

    Map<String, Object> error =
        Map.of("type", "ValueError", "message", "boom", "stack", "at a()", "step", "a");
    Api.Response failed =
        worker.complete(
            task,
            Map.of(
                "step",
                Map.of("name", "a", "kind", "run", "error", error),
                "result",
                Map.of("status", "failed", "error", error)));
    assertThat(failed.json().get("outcome").asText()).as(failed.body()).isEqualTo("ok");
    JsonNode shown = worker.run(run);
    assertThat(shown.get("status").asText()).isEqualTo("failed");
    assertThat(shown.get("error").get("type").asText()).isEqualTo("ValueError");
    assertThat(shown.get("error").get("message").asText()).isEqualTo("boom");
  }
}
