package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One key's own concurrency limit over HTTP: set, read and removed; it holds for its key in place
 * of the workflow's, which still holds for the other keys; bad input is a 400 naming the field that
 * changes nothing, and a key without one is a 404. Every exchange is checked against openapi.yaml.
 */
class KeyConcurrencyRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static void assertBadField(Api.Response r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().get("field").asText()).isEqualTo(field);
  }

  @Test
  void aKeysOwnLimitIsSetReadAndRemoved() {
    Api.Response set = api.put("/v1/workflows/keyed/concurrency/customer-7", Map.of("limit", 1));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(set.json().get("workflow").asText()).isEqualTo("keyed");
    assertThat(set.json().get("key").asText()).isEqualTo("customer-7");
    assertThat(set.json().get("limit").asInt()).isEqualTo(1);

    JsonNode read = api.get("/v1/workflows/keyed/concurrency/customer-7").json();
    assertThat(read.get("limit").asInt()).isEqualTo(1);
    JsonNode workflow = api.get("/v1/workflows/keyed/concurrency").json();
    assertThat(workflow.has("limit")).as("the workflow's own limit is untouched").isFalse();
    assertThat(workflow.get("keys")).hasSize(1);
    assertThat(workflow.get("keys").get(0).get("key").asText()).isEqualTo("customer-7");
    assertThat(workflow.get("keys").get(0).get("limit").asInt()).isEqualTo(1);

    Api.Response removed = api.delete("/v1/workflows/keyed/concurrency/customer-7");
    assertThat(removed.status()).as(removed.body()).isEqualTo(204);
    assertThat(api.get("/v1/workflows/keyed/concurrency/customer-7").status()).isEqualTo(404);
    assertThat(api.get("/v1/workflows/keyed/concurrency").json().get("keys")).isEmpty();
    assertThat(api.delete("/v1/workflows/keyed/concurrency/customer-7").status()).isEqualTo(404);

    JsonNode audit = api.get("/v1/audit").json().get("entries");
    assertThat(audit.findValuesAsText("action"))
        .contains("workflow.concurrency.key", "workflow.concurrency.key.delete");
  }

  @Test
  void aBadKeyLimitIsRefusedNamingTheFieldAndChangesNothing() {
    api.put("/v1/workflows/kept-key/concurrency/k", Map.of("limit", 2));
    assertBadField(api.put("/v1/workflows/kept-key/concurrency/k", Map.of("limit", 0)), "limit");
    assertBadField(
        api.put("/v1/workflows/kept-key/concurrency/k", Map.of("limit", 100_001)), "limit");
    Map<String, Object> none = new HashMap<>();
    none.put("limit", null);
    assertBadField(api.put("/v1/workflows/kept-key/concurrency/k", none), "limit");
    assertBadField(
        api.put("/v1/workflows/kept-key/concurrency/" + "k".repeat(256), Map.of("limit", 1)),
        "key");
    assertThat(api.get("/v1/workflows/kept-key/concurrency/k").json().get("limit").asInt())
        .isEqualTo(2);
  }

  @Test
  void aKeysOwnLimitHoldsForItWhileTheWorkflowsHoldsForTheOthers() {
    WorkerClient worker = server.worker("split-limits");
    api.put("/v1/workflows/split-limits/concurrency", Map.of("limit", 3));
    api.put("/v1/workflows/split-limits/concurrency/a", Map.of("limit", 1));
    Set<Long> keyA = new HashSet<>();
    for (int i = 0; i < 5; i++) {
      keyA.add(WorkerClient.created(worker.startWith(Map.of("input", i, "concurrencyKey", "a"))));
      WorkerClient.created(worker.startWith(Map.of("input", i, "concurrencyKey", "b")));
    }
    JsonNode tasks = worker.poll(List.of(1), 10, 0).json().get("tasks");
    long ofA = 0;
    for (JsonNode t : tasks) {
      ofA += keyA.contains(t.get("runId").asLong()) ? 1 : 0;
    }
    assertThat(ofA).as("runs of key a handed out").isEqualTo(1);
    assertThat(tasks.size() - ofA).as("runs of key b handed out").isEqualTo(3);

    // Raising the key's limit lets its waiting runs through at once.
    api.put("/v1/workflows/split-limits/concurrency/a", Map.of("limit", 4));
    JsonNode more = worker.poll(List.of(1), 10, 0).json().get("tasks");
    assertThat(more).hasSize(3);
    for (JsonNode t : more) {
      assertThat(keyA).contains(t.get("runId").asLong());
    }
  }
}
