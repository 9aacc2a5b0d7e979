package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** POST /v1/workflows/{name}/runs/batch: many starts in one request. */
class StartBatchTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static Api.Response batch(String wf, List<?> runs) {
    return api.post("/v1/workflows/" + wf + "/runs/batch", Map.of("runs", runs));
  }

  private static Map<String, Object> run(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static long runs(String wf) {
    return api.get("/v1/workflows/" + wf + "/runs?limit=1000").json().get("runs").size();
  }

  @Test
  void eachItemIsAnsweredInOrderAndABadOneCostsOnlyItself() {
    Map<String, Object> bad = new HashMap<>();
    bad.put("input", 3);
    bad.put("retentionDays", 0);
    List<Object> items = new ArrayList<>();
    items.add(run("input", Map.of("n", 1)));
    items.add(run("input", Map.of("n", 2), "idempotencyKey", "k-1"));
    items.add(bad);
    items.add(run("input", Map.of("n", 4), "idempotencyKey", "k-1"));
    items.add(run("input", "five", "version", 0));
    items.add(run("input", List.of(6), "traceparent", "not a traceparent"));
    Api.Response r = batch("mass", items);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode a = r.json().get("runs");
    assertThat(a).hasSize(6);
    assertThat(a.get(0).get("created").asBoolean()).isTrue();
    assertThat(a.get(0).get("status").asText()).isEqualTo("running");
    assertThat(a.get(1).get("created").asBoolean()).isTrue();
    assertThat(a.get(2).get("outcome").asText()).isEqualTo("rejected");
    assertThat(a.get(2).get("status").asInt()).isEqualTo(400);
    assertThat(a.get(2).get("detail").asText()).contains("retentionDays");
    // The same key twice in one batch names one run.
    assertThat(a.get(3).get("created").asBoolean()).isFalse();
    assertThat(a.get(3).get("runId").asLong()).isEqualTo(a.get(1).get("runId").asLong());
    assertThat(a.get(4).get("outcome").asText()).isEqualTo("rejected");
    assertThat(a.get(4).get("detail").asText()).contains("version");
    assertThat(a.get(5).get("created").asBoolean()).isTrue();
    assertThat(runs("mass")).isEqualTo(3);

    JsonNode first = api.get("/v1/workflows/mass/runs/" + a.get(0).get("runId").asLong()).json();
    assertThat(first.get("input").get("n").asInt()).isEqualTo(1);
    JsonNode sixth = api.get("/v1/workflows/mass/runs/" + a.get(5).get("runId").asLong()).json();
    assertThat(sixth.get("input").get(0).asInt()).isEqualTo(6);

    // Each started run is a task, with its own input.
    Api.Response p =
        api.post(
            "/v1/workflows/mass/tasks/poll",
            Map.of("versions", List.of(1), "max", 10, "waitSeconds", 0));
    assertThat(p.json().get("tasks")).hasSize(3);
  }

  @Test
  void anItemOnlyTheDatabaseRefusesCostsOnlyItself() {
    // jsonb has no NUL character: the HTTP checks let this input through, PostgreSQL refuses the
    // batch as a whole, and the items are started again one by one.
    Api.Response r =
        batch("refused", List.of(run("input", 1), run("input", "a\u0000b"), run("input", 3)));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode a = r.json().get("runs");
    assertThat(a.get(0).get("created").asBoolean()).isTrue();
    assertThat(a.get(1).get("outcome").asText()).isEqualTo("rejected");
    assertThat(a.get(1).get("status").asInt()).isEqualTo(400);
    assertThat(a.get(2).get("created").asBoolean()).isTrue();
    assertThat(runs("refused")).isEqualTo(2);
  }

  @Test
  void wholeBatchRefusalsChangeNothing() {
    assertThat(batch("empty", List.of()).status()).isEqualTo(400);
    List<Object> many = new ArrayList<>();
    for (int i = 0; i < 101; i++) {
      many.add(run("input", i));
    }
    assertThat(batch("toomany", many).status()).isEqualTo(400);
    assertThat(api.post("/v1/workflows/nolist/runs/batch", Map.of("runs", 5)).status())
        .isEqualTo(400);
    assertThat(batch("BadName", List.of(run("input", 1))).status()).isEqualTo(400);
    assertThat(runs("empty") + runs("toomany") + runs("nolist")).isZero();
  }
}
