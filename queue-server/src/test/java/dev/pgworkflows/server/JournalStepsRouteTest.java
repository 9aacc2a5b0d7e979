package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST /runs/{runId}/steps} journals a parallel group's branches under the lease, which
 * carries on; a lost lease answers stale or not_running and writes nothing; bad input is a 400
 * naming the field before anything is written. Every exchange is checked against openapi.yaml.
 */
class JournalStepsRouteTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  @Test
  void stepsAreJournaledInTheOrderSentAndTheLeaseCarriesOn() {
    WorkerClient worker = server.worker("fan-out");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();

    Api.Response first =
        journal(
            "fan-out",
            task,
            List.of(
                Map.of(
                    "name", "b", "kind", "run", "output", 2, "startedAt", "2026-11-22T07:50:16Z"),
                Map.of(
                    "name",
                    "a",
                    "kind",
                    "run",
                    "error",
                    Map.of("type", "java.lang.IllegalStateException", "message", "no"))));
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    assertThat(first.json().get("outcome").asText()).isEqualTo("ok");
    assertThat(first.json().get("journaled").asInt()).isEqualTo(2);

    // A step journaled already is neither rewritten nor counted.
    Api.Response again = journal("fan-out", task, List.of(step("a", 9), step("c", 3)));
    assertThat(again.json().get("outcome").asText()).as(again.body()).isEqualTo("ok");
    assertThat(again.json().get("journaled").asInt()).isEqualTo(1);
    JsonNode steps = server.api().get("/v1/workflows/fan-out/runs/" + run + "/steps").json();
    assertThat(steps.get("steps").findValuesAsText("name")).containsExactly("b", "a", "c");
    assertThat(steps.get("steps").get(1).get("error").get("message").asText()).isEqualTo("no");

    // The same receipt still holds the lease: the run goes on inline and ends.
    Api.Response next =
        worker.complete(task, Map.of("step", step("d", 4), "next", Map.of("inline", true)));
    assertThat(next.json().get("outcome").asText()).as(next.body()).isEqualTo("ok");
    Api.Response end =
        worker.complete(task, Map.of("result", Map.of("status", "completed", "output", 1)));
    assertThat(end.json().get("outcome").asText()).as(end.body()).isEqualTo("ok");
    assertThat(worker.journal(run)).containsExactly("b", "a", "c", "d");
  }

  @Test
  void aLostLeaseWritesNothing() {
    WorkerClient worker = server.worker("fan-lost");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    Map<String, Object> stale = new LinkedHashMap<>();
    stale.put("messageId", task.get("messageId").asLong());
    stale.put("receipt", "1");
    stale.put("steps", List.of(step("a", 1)));
    Api.Response r = server.api().post(path("fan-lost", run), stale);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("outcome").asText()).isEqualTo("stale");
    assertThat(r.json().get("journaled").asInt()).isZero();

    assertThat(server.api().delete("/v1/workflows/fan-lost/runs/" + run).status()).isEqualTo(200);
    Api.Response cancelled = journal("fan-lost", task, List.of(step("a", 1)));
    assertThat(cancelled.json().get("outcome").asText())
        .as(cancelled.body())
        .isEqualTo("not_running");
    assertThat(worker.journal(run)).isEmpty();
  }

  @Test
  void badInputIsA400NamingTheFieldAndWritesNothing() {
    WorkerClient worker = server.worker("fan-bad");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    List<Object> tooMany = new ArrayList<>();
    for (int i = 0; i < 1001; i++) {
      tooMany.add(step("s" + i, i));
    }
    Map<String, Object> bogus = new LinkedHashMap<>(body(task, List.of(step("a", 1))));
    bogus.put("bogus", true);
    Map<String, Object> noReceipt = new LinkedHashMap<>(body(task, List.of(step("a", 1))));
    noReceipt.remove("receipt");
    Object[][] cases = {
      {body(task, List.of()), "steps"},
      {body(task, tooMany), "steps"},
      {body(task, List.of(step("a", 1), Map.of("name", "s", "kind", "sleep"))), "steps[1].kind"},
      {body(task, List.of(Map.of("name", "a"))), "steps[0].kind"},
      {body(task, List.of(step("not a name!", 1))), "steps[0].name"},
      {body(task, List.of(step("a", 1), step("a", 2))), "steps[1].name"},
      {body(task, List.of(Map.of("name", "a", "kind", "run", "error", "no"))), "steps[0].error"},
      {noReceipt, "receipt"},
    };
    for (Object[] c : cases) {
      Api.Response r = server.api().post(path("fan-bad", run), c[0]);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("field").asText()).as(r.body()).isEqualTo(c[1]);
    }
    Api.Response unknown = server.api().post(path("fan-bad", run), bogus);
    assertThat(unknown.status()).as(unknown.body()).isEqualTo(400);
    assertThat(unknown.body()).contains("bogus");
    assertThat(worker.journal(run)).isEmpty();

    Api.Response missing =
        server.api().post(path("fan-bad", run + 1000), body(task, List.of(step("a", 1))));
    assertThat(missing.status()).as(missing.body()).isEqualTo(404);
    assertThat(missing.isProblem()).isTrue();
  }

  private static String path(String workflow, long run) {
    return "/v1/workflows/" + workflow + "/runs/" + run + "/steps";
  }

  private static Map<String, Object> body(JsonNode task, List<?> steps) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("messageId", task.get("messageId").asLong());
    m.put("receipt", task.get("receipt").asText());
    m.put("steps", steps);
    return m;
  }

  private static Api.Response journal(String workflow, JsonNode task, List<?> steps) {
    return server.api().post(path(workflow, task.get("runId").asLong()), body(task, steps));
  }
}
