package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Signals over HTTP: kept in the run's inbox until a wait takes them, idempotent by key, refused
 * once the run has ended, and listed by {@code GET .../signals}; every exchange checked against
 * openapi.yaml.
 */
class SignalRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static String signals(String workflow, long run) {
    return "/v1/workflows/" + workflow + "/runs/" + run + "/signals";
  }

  private static Api.Response signal(String workflow, long run, String event, Object payload) {
    return api.post(signals(workflow, run) + "/" + event, payload);
  }

  private static Api.Response signal(
      String workflow, long run, String event, Object payload, String key) {
    return api.send(
        "POST", signals(workflow, run) + "/" + event, payload, Map.of("Idempotency-Key", key));
  }

  @Test
  void aSignalSentBeforeTheWaitIsBufferedThenDeliveredToTheWait() {
    WorkerClient worker = server.worker("early");
    long run = worker.start(Map.of());
    Api.Response sent = signal("early", run, "paid", Map.of("amount", 5));
    assertThat(sent.status()).as(sent.body()).isEqualTo(200);
    assertThat(sent.json().get("outcome").asText()).isEqualTo("buffered");
    assertThat(sent.json().get("delivered").asBoolean()).isFalse();
    long signalId = sent.json().get("signalId").asLong();

    JsonNode kept = api.get(signals("early", run)).json().get("signals");
    assertThat(kept).hasSize(1);
    assertThat(kept.get(0).get("signalId").asLong()).isEqualTo(signalId);
    assertThat(kept.get(0).get("payload").get("amount").asInt()).isEqualTo(5);
    assertThat(kept.get(0).has("deliveredAt")).isFalse();

    // The wait (without a timeout) begins with the signal in the inbox: it takes it at once.
    Api.Response waiting =
        worker.complete(
            worker.pollOne(),
            Map.of("next", Map.of("wait", Map.of("step", "pay", "event", "paid"))));
    assertThat(waiting.json().get("outcome").asText()).as(waiting.body()).isEqualTo("ok");
    JsonNode resumed = worker.pollOne();
    assertThat(resumed.get("reason").asText()).isEqualTo("signal");
    assertThat(resumed.get("journal")).hasSize(1);
    assertThat(resumed.get("journal").get(0).get("name").asText()).isEqualTo("pay");
    assertThat(resumed.get("journal").get(0).get("kind").asText()).isEqualTo("wait");
    assertThat(resumed.get("journal").get(0).get("output").get("amount").asInt()).isEqualTo(5);

    JsonNode taken = api.get(signals("early", run)).json().get("signals").get(0);
    assertThat(taken.has("deliveredAt")).isTrue();
    assertThat(taken.get("deliveredTo").asText()).isEqualTo("pay");
    assertThat(worker.run(run).has("waitingFor")).isFalse();
  }

  @Test
  void aRepeatedIdempotencyKeyIsAnsweredDuplicateAndStoredOnce() {
    WorkerClient worker = server.worker("keyed");
    long run = worker.start(Map.of());
    Api.Response first = signal("keyed", run, "paid", Map.of("n", 1), "payment-1");
    assertThat(first.json().get("outcome").asText()).as(first.body()).isEqualTo("buffered");
    Api.Response again = signal("keyed", run, "paid", Map.of("n", 2), "payment-1");
    assertThat(again.status()).as(again.body()).isEqualTo(200);
    assertThat(again.json().get("outcome").asText()).isEqualTo("duplicate");
    assertThat(again.json().get("delivered").asBoolean()).isFalse();
    assertThat(again.json().get("signalId").asLong())
        .isEqualTo(first.json().get("signalId").asLong());

    // Keys that do not fit are refused before anything is stored.
    for (String bad : List.of("", "k".repeat(256))) {
      Api.Response r = signal("keyed", run, "paid", Map.of("n", 3), bad);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("field").asText()).isEqualTo("Idempotency-Key");
    }

    JsonNode kept = api.get(signals("keyed", run)).json().get("signals");
    assertThat(kept).hasSize(1);
    assertThat(kept.get(0).get("idempotencyKey").asText()).isEqualTo("payment-1");
    assertThat(kept.get(0).get("payload").get("n").asInt()).isEqualTo(1);
  }

  @Test
  void hundredRacingSignalsAreEachAnsweredOnceOneDeliveredAndTheRestBuffered() throws Exception {
    WorkerClient worker = server.worker("racing");
    long run = worker.start(Map.of());
    worker.complete(
        worker.pollOne(),
        Map.of("next", Map.of("delayMs", 600_000, "wait", Map.of("step", "go", "event", "go"))));

    ExecutorService pool = Executors.newFixedThreadPool(16);
    Map<Long, String> outcomes = new HashMap<>();
    Map<Long, Integer> sentWith = new HashMap<>();
    try {
      List<Callable<Api.Response>> calls = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        int n = i;
        calls.add(() -> signal("racing", run, "go", Map.of("n", n)));
      }
      List<Future<Api.Response>> answers = pool.invokeAll(calls);
      for (int i = 0; i < answers.size(); i++) {
        Api.Response r = answers.get(i).get();
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        long id = r.json().get("signalId").asLong();
        assertThat(outcomes.put(id, r.json().get("outcome").asText())).as("signal " + id).isNull();
        sentWith.put(id, i);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(outcomes).hasSize(100);
    assertThat(outcomes.values()).containsOnly("delivered", "buffered");
    List<Long> delivered =
        outcomes.entrySet().stream()
            .filter(e -> e.getValue().equals("delivered"))
            .map(Map.Entry::getKey)
            .toList();
    assertThat(delivered).hasSize(1);

    JsonNode listed = api.get(signals("racing", run)).json().get("signals");
    assertThat(listed).hasSize(100);
    Set<Long> buffered = new HashSet<>();
    for (JsonNode s : listed) {
      long id = s.get("signalId").asLong();
      assertThat(outcomes).containsKey(id);
      assertThat(s.get("payload").get("n").asInt()).isEqualTo(sentWith.get(id));
      if (s.has("deliveredAt")) {
        assertThat(id).isEqualTo(delivered.get(0));
        assertThat(s.get("deliveredTo").asText()).isEqualTo("go");
      } else {
        buffered.add(id);
      }
    }
    assertThat(buffered).hasSize(99).doesNotContain(delivered.get(0));

    JsonNode resumed = worker.pollOne();
    assertThat(resumed.get("journal").get(0).get("output").get("n").asInt())
        .isEqualTo(sentWith.get(delivered.get(0)));
  }

  @Test
  void aSignalToAnEndedRunIsAConflictAndStoresNothing() {
    WorkerClient worker = server.worker("ended");
    long run = worker.start(Map.of());
    worker.complete(worker.pollOne(), Map.of("result", Map.of("status", "completed")));
    Api.Response late = signal("ended", run, "paid", Map.of());
    assertThat(late.status()).as(late.body()).isEqualTo(409);
    assertThat(late.isProblem()).isTrue();
    assertThat(late.json().get("detail").asText())
        .isEqualTo("run " + run + " has ended: completed");
    assertThat(api.get(signals("ended", run)).json().get("signals")).isEmpty();
  }

  @Test
  void reservedEventNamesAndMissingRunsAreRefused() {
    WorkerClient worker = server.worker("refused");
    long run = worker.start(Map.of());
    Api.Response reserved = signal("refused", run, "__child.1", Map.of());
    assertThat(reserved.status()).as(reserved.body()).isEqualTo(400);
    assertThat(reserved.json().get("field").asText()).isEqualTo("event");
    assertThat(signal("refused", run + 1000, "paid", Map.of()).status()).isEqualTo(404);
    // A run of another workflow is not this workflow's.
    assertThat(signal("other", run, "paid", Map.of()).status()).isEqualTo(404);
    assertThat(api.get(signals("other", run)).status()).isEqualTo(404);
    assertThat(api.get(signals("refused", run)).json().get("signals")).isEmpty();
  }
}
