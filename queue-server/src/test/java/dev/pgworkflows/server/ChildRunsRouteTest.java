package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST .../runs/{runId}/children}: a parent's step starts its child once; the parent shows
 * its children and the child its parent; the child's end comes to the parent as an event; a cancel
 * of the parent cancels the children that asked for it; bad bodies are 400s naming the field and
 * start nothing. Every exchange is checked against openapi.yaml.
 */
class ChildRunsRouteTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static Api.Response startChild(String parentWorkflow, long parent, Map<String, ?> body) {
    return api.post("/v1/workflows/" + parentWorkflow + "/runs/" + parent + "/children", body);
  }

  @Test
  void aStepStartsItsChildOnceAndEachSideShowsTheOther() {
    long parent = server.worker("order").start(Map.of("id", 7));
    Map<String, Object> body =
        Map.of("step", "charge", "workflow", "charge-card", "input", Map.of("amount", 12));
    Api.Response first = startChild("order", parent, body);
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    assertThat(first.json().get("created").asBoolean()).isTrue();
    assertThat(first.json().get("status").asText()).isEqualTo("running");
    long child = first.json().get("runId").asLong();

    Api.Response again = startChild("order", parent, body);
    assertThat(again.json().get("runId").asLong()).isEqualTo(child);
    assertThat(again.json().get("created").asBoolean()).isFalse();

    JsonNode shown = server.worker("order").run(parent);
    assertThat(shown.has("parent")).isFalse();
    assertThat(shown.get("children")).hasSize(1);
    JsonNode kid = shown.get("children").get(0);
    assertThat(kid.get("runId").asLong()).isEqualTo(child);
    assertThat(kid.get("workflow").asText()).isEqualTo("charge-card");
    assertThat(kid.get("status").asText()).isEqualTo("running");
    assertThat(kid.get("step").asText()).isEqualTo("charge");

    JsonNode childRun = server.worker("charge-card").run(child);
    assertThat(childRun.get("input").get("amount").asInt()).isEqualTo(12);
    assertThat(childRun.get("parent").get("runId").asLong()).isEqualTo(parent);
    assertThat(childRun.get("parent").get("workflow").asText()).isEqualTo("order");
    assertThat(childRun.get("parent").get("step").asText()).isEqualTo("charge");
    assertThat(childRun.get("children")).isEmpty();

    // The list filters by parent, and its pages carry no children.
    long loner = server.worker("charge-card").start(Map.of());
    JsonNode all = api.get("/v1/workflows/charge-card/runs").json().get("runs");
    assertThat(all.findValuesAsText("runId")).contains(Long.toString(loner));
    JsonNode kids = api.get("/v1/workflows/charge-card/runs?parent=" + parent).json().get("runs");
    assertThat(kids).hasSize(1);
    assertThat(kids.get(0).get("runId").asLong()).isEqualTo(child);
    assertThat(kids.get(0).get("parent").get("step").asText()).isEqualTo("charge");
    assertThat(kids.get(0).has("children")).isFalse();
    for (String bad : new String[] {"0", "-1", "x"}) {
      Api.Response r = api.get("/v1/workflows/charge-card/runs?parent=" + bad);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.json().get("field").asText()).isEqualTo("parent");
    }
  }

  @Test
  void theChildsEndReachesItsParentsWait() {
    WorkerClient parents = server.worker("joiner");
    WorkerClient children = server.worker("joined");
    long parent = parents.start(Map.of());
    JsonNode task = parents.pollOne();
    long child =
        startChild("joiner", parent, Map.of("step", "spawn", "workflow", "joined", "input", 3))
            .json()
            .get("runId")
            .asLong();
    // The worker journals the step as a child step and waits, with no timeout, for its end.
    Api.Response waiting =
        parents.complete(
            task,
            Map.of(
                "step",
                Map.of(
                    "name",
                    "spawn",
                    "kind",
                    "child",
                    "output",
                    Map.of("runId", child, "workflow", "joined")),
                "next",
                Map.of("wait", Map.of("step", "join", "event", "__child." + child))));
    assertThat(waiting.json().get("outcome").asText()).as(waiting.body()).isEqualTo("ok");

    JsonNode childTask = children.pollOne();
    assertThat(childTask.get("runId").asLong()).isEqualTo(child);
    children.complete(childTask, Map.of("result", Map.of("status", "completed", "output", 9)));

    JsonNode resumed = parents.pollOne();
    assertThat(resumed.get("reason").asText()).isEqualTo("signal");
    assertThat(resumed.get("journal").findValuesAsText("name")).containsExactly("spawn", "join");
    JsonNode end = resumed.get("journal").get(1).get("output");
    assertThat(end.get("runId").asLong()).isEqualTo(child);
    assertThat(end.get("status").asText()).isEqualTo("completed");
    assertThat(end.get("output").asInt()).isEqualTo(9);
    assertThat(parents.run(parent).get("children").get(0).get("status").asText())
        .isEqualTo("completed");
  }

  @Test
  void cancellingTheParentCancelsACancelChildAndLeavesAnAbandonChild() {
    long parent = server.worker("holder").start(Map.of());
    long cancelled =
        startChild("holder", parent, Map.of("step", "a", "workflow", "held"))
            .json()
            .get("runId")
            .asLong();
    long abandoned =
        startChild(
                "holder",
                parent,
                Map.of("step", "b", "workflow", "held", "onParentCancel", "abandon"))
            .json()
            .get("runId")
            .asLong();
    assertThat(
            api.delete("/v1/workflows/holder/runs/" + parent).json().get("cancelled").asBoolean())
        .isTrue();
    assertThat(server.worker("held").run(cancelled).get("status").asText()).isEqualTo("cancelled");
    assertThat(server.worker("held").run(abandoned).get("status").asText()).isEqualTo("running");
    // The child the cancel took counts as a cancelled run of its workflow.
    assertThat(api.withToken(null).get("/metrics").body())
        .contains("workflow_runs_completed_total{status=\"cancelled\",workflow=\"held\"} 1.0");

    // An ended parent starts no more children.
    Api.Response late = startChild("holder", parent, Map.of("step", "c", "workflow", "held"));
    assertThat(late.status()).as(late.body()).isEqualTo(409);
    assertThat(late.isProblem()).isTrue();
    assertThat(server.worker("holder").run(parent).get("children")).hasSize(2);
  }

  @Test
  void aMalformedBodyIsA400NamingTheFieldAndStartsNothing() {
    long parent = server.worker("picky").start(Map.of());
    Map<String, Object> bogus = new LinkedHashMap<>(Map.of("step", "s", "workflow", "kid"));
    bogus.put("bogus", 1);
    Map<String, Object> noStep = new HashMap<>(Map.of("workflow", "kid"));
    Object[][] cases = {
      {noStep, "step"},
      {Map.of("step", "not a step", "workflow", "kid"), "step"},
      {Map.of("step", "s"), "workflow"},
      {Map.of("step", "s", "workflow", "Kid"), "workflow"},
      {Map.of("step", "s", "workflow", "kid", "onParentCancel", "keep"), "onParentCancel"},
      {Map.of("step", "s", "workflow", "kid", "version", 0), "version"},
      {Map.of("step", "s", "workflow", "kid", "retentionDays", 0), "retentionDays"},
      {Map.of("step", "s", "workflow", "kid", "retentionDays", 36501), "retentionDays"},
      {Map.of("step", "s", "workflow", "kid", "version", "one"), "version"},
      {bogus, "bogus"},
    };
    for (Object[] c : cases) {
      @SuppressWarnings("unchecked")
      Map<String, ?> body = (Map<String, ?>) c[0];
      Api.Response r = startChild("picky", parent, body);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("field").asText()).as(r.body()).isEqualTo(c[1]);
    }
    // The parent must be a run of the workflow in the path.
    Map<String, Object> fine = Map.of("step", "s", "workflow", "kid");
    assertThat(startChild("other", parent, fine).status()).isEqualTo(404);
    assertThat(startChild("picky", parent + 1000, fine).status()).isEqualTo(404);

    assertThat(server.worker("picky").run(parent).get("children")).isEmpty();
    assertThat(api.get("/v1/workflows/kid/runs").json().get("runs")).isEmpty();
  }
}
