package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.Api;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Races and duplicate delivery, through the worker protocol. */
@Tag("reliability")
class RacesAndDuplicatesTest {
  @RegisterExtension static final LiveServer server = new LiveServer();
  private static Api api;

  @BeforeAll
  static void connect() {
    api = server.api();
  }

  private static List<Api.Response> race(int n, Callable<Api.Response> call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(32);
    try {
      List<Callable<Api.Response>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        calls.add(call);
      }
      List<Api.Response> out = new ArrayList<>();
      for (Future<Api.Response> f : pool.invokeAll(calls)) {
        out.add(f.get());
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  private static JsonNode poll(String wf, int lease) {
    JsonNode tasks =
        api.post(
                "/v1/workflows/" + wf + "/tasks/poll",
                Map.of("versions", List.of(1), "waitSeconds", 10, "leaseSeconds", lease))
            .json()
            .get("tasks");
    assertThat(tasks).hasSize(1);
    return tasks.get(0);
  }

  @Test
  void aHundredConcurrentStartsWithOneKeyMakeOneRun() throws Exception {
    Set<Long> ids = new HashSet<>();
    int created = 0;
    for (Api.Response r :
        race(
            100,
            () -> api.post("/v1/workflows/race/runs", Map.of("input", 1, "idempotencyKey", "k")))) {
      ids.add(r.json().get("runId").asLong());
      created += r.json().get("created").asBoolean() ? 1 : 0;
    }
    assertThat(ids).hasSize(1);
    assertThat(created).isEqualTo(1);
  }

  @Test
  void aHundredIdenticalSignalsDeliverOnce() throws Exception {
    long run =
        api.post("/v1/workflows/sigrace/runs", Map.of("input", 1)).json().get("runId").asLong();
    JsonNode task = poll("sigrace", 60);
    api.post(
        "/v1/workflows/sigrace/runs/" + run + "/complete",
        Map.of(
            "messageId", task.get("messageId").asLong(),
            "receipt", task.get("receipt").asText(),
            "next", Map.of("delayMs", 600_000, "wait", Map.of("step", "go", "event", "go"))));
    int delivered = 0;
    for (Api.Response r :
        race(
            100,
            () -> api.post("/v1/workflows/sigrace/runs/" + run + "/signals/go", Map.of("x", 1)))) {
      delivered += r.json().get("delivered").asBoolean() ? 1 : 0;
    }
    assertThat(delivered).isEqualTo(1);
    assertThat(api.get("/v1/workflows/sigrace/runs/" + run + "/steps").json().get("steps"))
        .hasSize(1);
  }

  @Test
  void aLeaseShorterThanTheStepMakesTwoWorkersRunItAndTheJournalKeepsOneRow() throws Exception {
    long run = api.post("/v1/workflows/dup/runs", Map.of("input", 1)).json().get("runId").asLong();
    JsonNode first = poll("dup", 1); // worker A's lease runs out while its step "runs"
    Thread.sleep(1_500);
    JsonNode second = poll("dup", 60); // worker B gets the same task again
    assertThat(second.get("messageId").asLong()).isEqualTo(first.get("messageId").asLong());
    assertThat(second.get("attempt").asInt()).isEqualTo(2);
    Map<String, Object> step = Map.of("name", "work", "kind", "run", "output", "from B");
    JsonNode b =
        api.post(
                "/v1/workflows/dup/runs/" + run + "/complete",
                Map.of(
                    "messageId",
                    second.get("messageId").asLong(),
                    "receipt",
                    second.get("receipt").asText(),
                    "step",
                    step,
                    "next",
                    Map.of("inline", true),
                    "leaseSeconds",
                    60))
            .json();
    assertThat(b.get("outcome").asText()).isEqualTo("ok");
    JsonNode a =
        api.post(
                "/v1/workflows/dup/runs/" + run + "/complete",
                Map.of(
                    "messageId",
                    first.get("messageId").asLong(),
                    "receipt",
                    first.get("receipt").asText(),
                    "step",
                    Map.of("name", "work", "kind", "run", "output", "from A"),
                    "next",
                    Map.of("inline", true),
                    "leaseSeconds",
                    60))
            .json();
    assertThat(a.get("outcome").asText()).isEqualTo("stale");
    JsonNode steps = api.get("/v1/workflows/dup/runs/" + run + "/steps").json().get("steps");
    assertThat(steps).hasSize(1);
    assertThat(steps.get(0).get("output").asText()).isEqualTo("from B");
  }
}
