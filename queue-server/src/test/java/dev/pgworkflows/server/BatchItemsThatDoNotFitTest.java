package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The batch completion contract of openapi.yaml: an item that does not fit Completion (an unknown
 * field, a value of the wrong type, a required field missing, not an object) is answered {@code
 * rejected} with a detail naming the field and what it should be, and its neighbours are applied;
 * only the envelope refuses the whole batch. Every exchange is checked against openapi.yaml.
 */
class BatchItemsThatDoNotFitTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  /** Runs started and polled: their tasks in start order. */
  private static List<JsonNode> tasks(WorkerClient w, int n) {
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(w.start(i));
    }
    Map<Long, JsonNode> byRun = w.pollUntil(n);
    return ids.stream().map(byRun::get).toList();
  }

  /** A valid item of {@code task} that journals step {@code a} and goes on inline. */
  private static Map<String, Object> good(JsonNode task) {
    return item(task, "step", step("a", 1), "next", Map.of("inline", true));
  }

  /** A valid item of {@code task} with one more field set to {@code value}, at a dotted path. */
  private static Map<String, Object> with(JsonNode task, String path, Object value) {
    Map<String, Object> m = good(task);
    String[] parts = path.split("\\.");
    Map<String, Object> at = m;
    for (int i = 0; i < parts.length - 1; i++) {
      @SuppressWarnings("unchecked")
      Map<String, Object> inner = new LinkedHashMap<>((Map<String, Object>) at.get(parts[i]));
      at.put(parts[i], inner);
      at = inner;
    }
    at.put(parts[parts.length - 1], value);
    return m;
  }

  private static void assertRejected(JsonNode outcome, String... words) {
    assertThat(outcome.get("outcome").asText()).as(outcome.toString()).isEqualTo("rejected");
    assertThat(outcome.get("status").asInt()).isEqualTo(400);
    String detail = outcome.get("detail").asText();
    assertThat(detail).contains(words);
    assertThat(detail)
        .doesNotContain("java.", "$", "dev.pgworkflows", "com.fasterxml", "`", "Completion");
  }

  @Test
  void anItemWithAnUnknownFieldIsRejectedAndItsNeighboursApplied() {
    WorkerClient w = server.worker("unknown-field");
    List<JsonNode> t = tasks(w, 4);
    Map<String, Object> surprise = good(t.get(1));
    surprise.put("surprise", true);
    Map<String, Object> deep = with(t.get(2), "step.colour", "blue");
    Api.Response r = w.completeBatch(List.of(good(t.get(0)), surprise, deep, good(t.get(3))));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode res = r.json().get("results");
    assertThat(res.get(0).get("outcome").asText()).isEqualTo("ok");
    assertRejected(res.get(1), "completions[1].surprise", "runId", "receipt");
    assertRejected(res.get(2), "completions[2].step.colour", "startedAt");
    assertThat(res.get(3).get("outcome").asText()).isEqualTo("ok");
    assertThat(w.journal(t.get(0).get("runId").asLong())).containsExactly("a");
    assertThat(w.journal(t.get(1).get("runId").asLong())).isEmpty();
    assertThat(w.journal(t.get(2).get("runId").asLong())).isEmpty();
    assertThat(w.journal(t.get(3).get("runId").asLong())).containsExactly("a");
  }

  @Test
  void anItemWithAWronglyTypedValueIsRejectedNamingTheFieldAndWhatItShouldBe() {
    WorkerClient w = server.worker("wrong-type");
    List<JsonNode> t = tasks(w, 8);
    Map<String, Object> longAsText = good(t.get(1));
    longAsText.put("messageId", "seventeen");
    Map<String, Object> fraction = good(t.get(5));
    fraction.put("leaseSeconds", 1.5);
    Map<String, Object> tooBig = good(t.get(6));
    tooBig.put("leaseSeconds", 99_999_999_999L);
    List<Object> items =
        List.of(
            good(t.get(0)),
            longAsText,
            with(t.get(2), "step.startedAt", "yesterday"),
            with(t.get(3), "next.inline", "yes"),
            with(t.get(4), "stepSeconds", Map.of("seconds", 1)),
            fraction,
            tooBig,
            good(t.get(7)));
    Api.Response r = w.completeBatch(items);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode res = r.json().get("results");
    assertThat(res).hasSize(8);
    assertThat(res.get(0).get("outcome").asText()).isEqualTo("ok");
    assertRejected(res.get(1), "completions[1].messageId must be a whole number");
    assertThat(res.get(2).get("detail").asText())
        .as("the contract's own example")
        .isEqualTo("completions[2].step.startedAt must be an RFC 3339 date-time string");
    assertRejected(res.get(2), "completions[2].step.startedAt");
    assertRejected(res.get(3), "completions[3].next.inline must be true or false");
    assertRejected(res.get(4), "completions[4].stepSeconds must be a number");
    assertRejected(res.get(5), "completions[5].leaseSeconds must be a whole number");
    assertRejected(res.get(6), "completions[6].leaseSeconds must be a whole number from");
    assertThat(res.get(7).get("outcome").asText()).isEqualTo("ok");
    for (int i = 1; i <= 6; i++) {
      assertThat(w.journal(t.get(i).get("runId").asLong())).as("item %d", i).isEmpty();
    }
    assertThat(w.journal(t.get(7).get("runId").asLong())).containsExactly("a");
  }

  @Test
  void anItemMissingARequiredFieldOrNotAnObjectIsRejected() {
    WorkerClient w = server.worker("missing-field");
    List<JsonNode> t = tasks(w, 3);
    Map<String, Object> noRun = new HashMap<>(good(t.get(1)));
    noRun.remove("runId");
    Map<String, Object> noMessage = new HashMap<>(good(t.get(2)));
    noMessage.remove("messageId");
    List<Object> items = new ArrayList<>();
    items.add(noRun);
    items.add(noMessage);
    items.add(42);
    items.add("a string");
    items.add(List.of(1));
    items.add(null);
    items.add(good(t.get(0)));
    Api.Response r = w.completeBatch(items);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode res = r.json().get("results");
    assertRejected(res.get(0), "runId is required");
    assertRejected(res.get(1), "messageId is required");
    assertRejected(res.get(2), "completions[2] must be an object");
    assertRejected(res.get(3), "completions[3] must be an object");
    assertRejected(res.get(4), "completions[4] must be an object");
    assertRejected(res.get(5), "completions[5] must be an object");
    assertThat(res.get(6).get("outcome").asText()).isEqualTo("ok");
    assertThat(w.journal(t.get(0).get("runId").asLong())).containsExactly("a");
    assertThat(w.journal(t.get(1).get("runId").asLong())).isEmpty();
    assertThat(w.journal(t.get(2).get("runId").asLong())).isEmpty();
  }

  /** An item that does not fit and a take: the take is still served for the slots freed. */
  @Test
  void aBatchWithAnItemThatDoesNotFitStillTakesTasks() {
    WorkerClient w = server.worker("still-takes");
    List<JsonNode> t = tasks(w, 2);
    long waiting = w.start(99);
    Map<String, Object> bad = good(t.get(1));
    bad.put("leaseSeconds", "long");
    Api.Response r =
        w.completeBatch(
            List.of(
                item(t.get(0), "step", step("a", 1), "result", Map.of("status", "completed")), bad),
            Map.of("versions", List.of(1), "max", 1));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("results").get(0).get("outcome").asText()).isEqualTo("ok");
    assertRejected(r.json().get("results").get(1), "completions[1].leaseSeconds");
    assertThat(r.json().get("tasks").findValuesAsText("runId"))
        .containsExactly(String.valueOf(waiting));
  }

  @Test
  void theEnvelopeStillRefusesTheWholeBatch() {
    WorkerClient w = server.worker("envelope");
    List<JsonNode> t = tasks(w, 1);
    Map<String, Object> bad = good(t.get(0));
    bad.put("surprise", 1);
    String path = "/v1/workflows/envelope/tasks/complete";
    List<Object> tooMany = new ArrayList<>();
    for (int i = 0; i < 101; i++) {
      tooMany.add(good(t.get(0)));
    }
    Map<String, Object> extra = new HashMap<>();
    extra.put("completions", List.of(good(t.get(0)), bad));
    extra.put("surprise", 1);
    Map<String, Object> badTake = new HashMap<>();
    badTake.put("completions", List.of(bad, good(t.get(0))));
    badTake.put("take", Map.of("versions", "one"));
    Map<Object, String> refusals = new LinkedHashMap<>();
    refusals.put("[]", null);
    refusals.put("\"completions\"", null);
    refusals.put(Map.of(), "completions");
    refusals.put(Map.of("completions", Map.of("0", good(t.get(0)))), "completions");
    refusals.put(Map.of("completions", List.of()), "completions");
    refusals.put(Map.of("completions", tooMany), "completions");
    refusals.put(extra, "surprise");
    refusals.put(badTake, "take.versions");
    refusals.put("{\"completions\": [" + Api.JSON.valueToTree(bad) + ", {\"runId\": }]}", null);
    for (Map.Entry<Object, String> e : refusals.entrySet()) {
      Api.Response r = api.post(path, e.getKey());
      assertThat(r.status()).as("%s: %s", e.getKey(), r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      String detail = r.json().get("detail").asText();
      assertThat(detail).doesNotContain("java.", "$", "com.fasterxml", "`");
      if (e.getValue() != null) {
        assertThat(r.json().get("field").asText()).as(detail).isEqualTo(e.getValue());
        assertThat(detail).contains(e.getValue());
      }
    }
    assertThat(w.journal(t.get(0).get("runId").asLong())).as("nothing applied").isEmpty();
  }
}
