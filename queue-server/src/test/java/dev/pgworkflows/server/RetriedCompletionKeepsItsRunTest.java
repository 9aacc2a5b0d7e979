package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker's retry of an inline step whose first attempt went through (its answer lost), with the
 * workflow paused in between: answered duplicate, and the run keeps its task, so once the worker
 * lets the lease go the run is handed out again and goes on from its journal.
 */
class RetriedCompletionKeepsItsRunTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static final Map<String, Object> STEP_A =
      Map.of(
          "step", Map.of("name", "a", "kind", "run", "output", 1), "next", Map.of("inline", true));

  @Test
  void aRetriedInlineStepThatFindsTheWorkflowPausedLeavesTheRunToGoOn() {
    long run = server.worker("again").start(Map.of("n", 1));
    JsonNode task = server.worker("again").pollOne();
    Api.Response first = server.worker("again").complete(task, STEP_A);
    assertThat(first.json().get("outcome").asText()).isEqualTo("ok");
    ObjectNode kept = task.deepCopy();
    kept.put("receipt", first.json().get("receipt").asText());

    assertThat(api.post("/v1/workflows/again/pause", null).status()).isEqualTo(200);
    Api.Response retried = server.worker("again").complete(kept, STEP_A);
    assertThat(retried.status()).isEqualTo(200);
    assertThat(retried.json().get("outcome").asText()).isEqualTo("duplicate");
    assertThat(api.post("/v1/workflows/again/resume", null).status()).isEqualTo(200);

    // The worker lets the lease go (here at once): the run is handed out again.
    Api.Response handedBack =
        api.post(
            "/v1/workflows/again/runs/" + run + "/retry",
            Map.of(
                "messageId", kept.get("messageId").asLong(),
                "receipt", kept.get("receipt").asText(),
                "delayMs", 0));
    assertThat(handedBack.json().get("outcome").asText()).isEqualTo("ok");
    JsonNode again = server.worker("again").pollOne();
    assertThat(again.get("runId").asLong()).isEqualTo(run);
    assertThat(again.get("journal").findValuesAsText("name")).containsExactly("a");

    Api.Response done =
        server
            .worker("again")
            .complete(
                again,
                Map.of(
                    "step",
                    Map.of("name", "b", "kind", "run", "output", 2),
                    "result",
                    Map.of("status", "completed", "output", "done")));
    assertThat(done.json().get("outcome").asText()).isEqualTo("ok");
    assertThat(api.get("/v1/workflows/again/runs/" + run).json().get("status").asText())
        .isEqualTo("completed");
  }
}
