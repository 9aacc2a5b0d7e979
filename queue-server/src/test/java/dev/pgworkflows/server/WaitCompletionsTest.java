package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Completions that wait: on one event or on several arms (the first or all of them), with or
 * without a timeout; a malformed wait is a 400 naming the field and changes nothing. Every exchange
 * is checked against openapi.yaml.
 */
class WaitCompletionsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static Api.Response signal(String workflow, long run, String event, Object payload) {
    return api.post("/v1/workflows/" + workflow + "/runs/" + run + "/signals/" + event, payload);
  }

  @Test
  void aWaitWithoutATimeoutHasNoMessageUntilItsEventComes() {
    WorkerClient worker = server.worker("untimed");
    long run = worker.start(Map.of());
    Api.Response waiting =
        worker.complete(
            worker.pollOne(), Map.of("next", Map.of("wait", Map.of("step", "w", "event", "go"))));
    assertThat(waiting.json().get("outcome").asText()).as(waiting.body()).isEqualTo("ok");
    assertThat(waiting.json().has("messageId")).isFalse();
    assertThat(api.get("/v1/queues/__wf_untimed").json().at("/metrics/depth").asLong()).isZero();
    JsonNode waitingFor = worker.run(run).get("waitingFor");
    assertThat(waitingFor.get("step").asText()).isEqualTo("w");
    assertThat(waitingFor.get("event").asText()).isEqualTo("go");
    assertThat(waitingFor.has("arms")).isFalse();

    assertThat(signal("untimed", run, "go", Map.of("k", 1)).json().get("outcome").asText())
        .isEqualTo("delivered");
    JsonNode resumed = worker.pollOne();
    assertThat(resumed.get("reason").asText()).isEqualTo("signal");
    assertThat(resumed.get("journal").get(0).get("output").get("k").asInt()).isEqualTo(1);
  }

  @Test
  void aWaitOnAnyArmEndsAtTheFirstThatFits() {
    WorkerClient worker = server.worker("any-arm");
    long run = worker.start(Map.of());
    Map<String, Object> wait =
        Map.of(
            "step",
            "decide",
            "arms",
            List.of(
                Map.of("event", "approve", "match", Map.of("level", 2)),
                Map.of("event", "reject")));
    worker.complete(worker.pollOne(), Map.of("next", Map.of("delayMs", 600_000, "wait", wait)));
    JsonNode waitingFor = worker.run(run).get("waitingFor");
    assertThat(waitingFor.has("event")).isFalse();
    assertThat(waitingFor.get("all").asBoolean()).isFalse();
    assertThat(waitingFor.get("arms").findValuesAsText("event"))
        .containsExactly("approve", "reject");
    assertThat(waitingFor.get("arms").get(0).get("match").get("level").asInt()).isEqualTo(2);

    assertThat(signal("any-arm", run, "approve", Map.of("level", 1)).json().get("outcome").asText())
        .isEqualTo("buffered");
    assertThat(signal("any-arm", run, "reject", Map.of("why", "no")).json().get("outcome").asText())
        .isEqualTo("delivered");
    JsonNode fired = worker.pollOne().get("journal").get(0).get("output").get("fired");
    assertThat(fired.get(0).isNull()).isTrue();
    assertThat(fired.get(1).get("event").asText()).isEqualTo("reject");
    assertThat(fired.get(1).get("payload").get("why").asText()).isEqualTo("no");
  }

  @Test
  void aWaitOnAllArmsEndsWhenTheLastHasFired() {
    WorkerClient worker = server.worker("all-arms");
    long run = worker.start(Map.of());
    Map<String, Object> wait =
        Map.of(
            "step",
            "both",
            "arms",
            List.of(Map.of("event", "a"), Map.of("event", "b")),
            "all",
            true);
    worker.complete(worker.pollOne(), Map.of("next", Map.of("wait", wait)));
    assertThat(signal("all-arms", run, "b", 2).json().get("outcome").asText())
        .isEqualTo("delivered");
    JsonNode waitingFor = worker.run(run).get("waitingFor");
    assertThat(waitingFor.get("all").asBoolean()).isTrue();
    assertThat(waitingFor.get("arms").findValuesAsText("fired")).containsExactly("false", "true");
    assertThat(worker.poll(List.of(1), 1, 0).json().get("tasks")).isEmpty();

    assertThat(signal("all-arms", run, "a", 1).json().get("outcome").asText())
        .isEqualTo("delivered");
    JsonNode fired = worker.pollOne().get("journal").get(0).get("output").get("fired");
    assertThat(fired.get(0).get("payload").asInt()).isEqualTo(1);
    assertThat(fired.get(1).get("payload").asInt()).isEqualTo(2);
  }

  @Test
  void aMalformedWaitIsA400NamingTheFieldAndChangesNothing() {
    WorkerClient worker = server.worker("bad-wait");
    long run = worker.start(Map.of());
    JsonNode task = worker.pollOne();
    List<Map<String, Object>> tooMany = new ArrayList<>();
    for (int i = 0; i < 65; i++) {
      tooMany.add(Map.of("event", "e" + i));
    }
    List<Object> withNull = new ArrayList<>();
    withNull.add(null);
    Map<String, Object> noEvent = new HashMap<>();
    noEvent.put("step", "w");
    Object[][] cases = {
      {Map.of("event", "e"), "next.wait.step"},
      {Map.of("step", "not a step", "event", "e"), "next.wait.step"},
      {noEvent, "next.wait"},
      {Map.of("step", "w", "event", "e", "arms", List.of(Map.of("event", "e"))), "next.wait"},
      {Map.of("step", "w", "event", ""), "next.wait.event"},
      {Map.of("step", "w", "event", "e".repeat(129)), "next.wait.event"},
      {Map.of("step", "w", "event", "e", "all", true), "next.wait.all"},
      {Map.of("step", "w", "arms", List.of()), "next.wait.arms"},
      {Map.of("step", "w", "arms", tooMany), "next.wait.arms"},
      {Map.of("step", "w", "arms", withNull), "next.wait.arms[0]"},
      {
        Map.of("step", "w", "arms", List.of(Map.of("event", "a"), Map.of())),
        "next.wait.arms[1].event"
      },
      {
        Map.of("step", "w", "arms", List.of(Map.of("event", "e".repeat(129)))),
        "next.wait.arms[0].event"
      },
      {
        Map.of("step", "w", "arms", List.of(Map.of("event", "a", "match", "x"))),
        "next.wait.arms[0].match"
      },
      {
        Map.of("step", "w", "arms", List.of(Map.of("event", "a", "when", 1))),
        "next.wait.arms[0].when"
      },
      {
        Map.of("step", "w", "arms", List.of(Map.of("event", "a")), "match", Map.of()),
        "next.wait.match"
      },
    };
    for (Object[] c : cases) {
      Api.Response r = worker.complete(task, Map.of("next", Map.of("wait", c[0])));
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("field").asText()).as(r.body()).isEqualTo(c[1]);
    }
    Api.Response kind =
        worker.complete(
            task,
            Map.of("step", Map.of("name", "s", "kind", "nap"), "next", Map.of("inline", true)));
    assertThat(kind.status()).as(kind.body()).isEqualTo(400);
    assertThat(kind.json().get("field").asText()).isEqualTo("step.kind");

    // In a batch the malformed item alone is refused, naming the field.
    Api.Response batch =
        worker.completeBatch(
            List.of(item(task, "next", Map.of("wait", Map.of("step", "w", "arms", List.of())))));
    JsonNode refused = batch.json().get("results").get(0);
    assertThat(refused.get("outcome").asText()).as(batch.body()).isEqualTo("rejected");
    assertThat(refused.get("status").asInt()).isEqualTo(400);
    assertThat(refused.get("detail").asText()).contains("next.wait.arms");

    assertThat(worker.run(run).has("waitingFor")).isFalse();
    assertThat(worker.journal(run)).isEmpty();
    // The lease still holds: the run goes on.
    Api.Response fine =
        worker.complete(task, Map.of("result", Map.of("status", "completed", "output", 1)));
    assertThat(fine.json().get("outcome").asText()).as(fine.body()).isEqualTo("ok");
  }

  @Test
  void aChildStepIsAJournalKindOfItsOwn() {
    WorkerClient worker = server.worker("child-kind");
    long run = worker.start(Map.of());
    Api.Response r =
        worker.complete(
            worker.pollOne(),
            Map.of(
                "step",
                Map.of(
                    "name",
                    "spawn",
                    "kind",
                    "child",
                    "output",
                    Map.of("runId", 7, "workflow", "x")),
                "next",
                Map.of("inline", true)));
    assertThat(r.json().get("outcome").asText()).as(r.body()).isEqualTo("ok");
    JsonNode steps = api.get("/v1/workflows/child-kind/runs/" + run + "/steps").json();
    assertThat(steps.get("steps").get(0).get("kind").asText()).isEqualTo("child");
  }
}
