package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A child run's concurrency key, priority and deadline, given by the step that starts it: the child
 * carries them and waits for a slot of its key like any run; bad ones are a 400 naming the field
 * that starts no child. Every exchange is checked against openapi.yaml.
 */
class ChildFlowControlRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static Api.Response startChild(long parent, Map<String, ?> body) {
    return api.post("/v1/workflows/parent/runs/" + parent + "/children", body);
  }

  private static Map<String, Object> child(String step, Object... fields) {
    Map<String, Object> body = new HashMap<>();
    body.put("step", step);
    body.put("workflow", "kid");
    body.put("input", 1);
    for (int i = 0; i < fields.length; i += 2) {
      body.put((String) fields[i], fields[i + 1]);
    }
    return body;
  }

  @Test
  void aChildCarriesItsKeyPriorityAndDeadlineAndWaitsForASlot() {
    api.put("/v1/workflows/kid/concurrency", Map.of("limit", 1));
    long parent = server.worker("parent").start(Map.of());
    Instant before = Instant.now();
    Api.Response first =
        startChild(
            parent,
            child("one", "concurrencyKey", "tenant-1", "priority", 4, "deadlineMs", 60_000));
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    long one = first.json().get("runId").asLong();
    JsonNode view = server.worker("kid").run(one);
    assertThat(view.get("concurrencyKey").asText()).isEqualTo("tenant-1");
    assertThat(view.get("priority").asInt()).isEqualTo(4);
    assertThat(Instant.parse(view.get("deadlineAt").asText()))
        .isBetween(before.plus(Duration.ofSeconds(59)), Instant.now().plusSeconds(60));

    long two =
        startChild(parent, child("two", "concurrencyKey", "tenant-1")).json().get("runId").asLong();
    JsonNode tasks = server.worker("kid").poll(List.of(1), 10, 0).json().get("tasks");
    assertThat(tasks).as("one slot for the key").hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(one);
    assertThat(two).isNotEqualTo(one);
  }

  @Test
  void aBadChildFieldIsRefusedNamingItAndStartsNoChild() {
    long parent = server.worker("parent").start(Map.of());
    Object[][] cases = {
      {child("a", "priority", 10), "priority"},
      {child("b", "concurrencyKey", ""), "concurrencyKey"},
      {child("c", "deadlineMs", 0), "deadlineMs"},
    };
    for (Object[] c : cases) {
      @SuppressWarnings("unchecked")
      Api.Response r = startChild(parent, (Map<String, Object>) c[0]);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.json().get("field").asText()).isEqualTo(c[1]);
    }
    assertThat(api.get("/v1/workflows/kid/runs?parent=" + parent).json().get("runs")).isEmpty();
  }
}
