package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** POST /v1/workflows/{name}/tasks/complete: many runs' steps in one request. */
class BatchCompletionTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  @Test
  void eachItemIsAnsweredOnItsOwnInOrder() {
    long inline = server.worker("mixed").start(1);
    long finish = server.worker("mixed").start(2);
    long sleep = server.worker("mixed").start(3);
    long stale = server.worker("mixed").start(4);
    Map<Long, JsonNode> t = server.worker("mixed").pollUntil(4);

    Map<String, Object> staleItem =
        item(t.get(stale), "step", step("a", 0), "next", Map.of("inline", true));
    staleItem.put("receipt", "12345");
    List<Object> items = new ArrayList<>();
    items.add(item(t.get(inline), "step", step("a", 1), "next", Map.of("inline", true)));
    items.add(
        item(
            t.get(finish),
            "step",
            step("a", 2),
            "result",
            Map.of("status", "completed", "output", "done")));
    items.add(
        item(
            t.get(sleep),
            "step",
            Map.of("name", "nap", "kind", "sleep"),
            "next",
            Map.of("delayMs", 200)));
    items.add(staleItem);
    items.add(
        Map.of(
            "runId",
            999_999,
            "messageId",
            1,
            "receipt",
            "1",
            "next",
            Map.of("inline", true),
            "leaseSeconds",
            60));
    items.add(item(t.get(inline), "next", Map.of("inline", true)));

    Api.Response r = server.worker("mixed").completeBatch(items);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode res = r.json().get("results");
    assertThat(res).hasSize(6);
    assertThat(res.get(0).get("outcome").asText()).isEqualTo("ok");
    assertThat(res.get(0).get("messageId").asLong())
        .isEqualTo(t.get(inline).get("messageId").asLong());
    // A fresh lease is kept as it is, under the same receipt.
    String newReceipt = res.get(0).get("receipt").asText();
    assertThat(newReceipt).isEqualTo(t.get(inline).get("receipt").asText());
    assertThat(res.get(1).get("outcome").asText()).isEqualTo("ok");
    assertThat(res.get(2).get("outcome").asText()).isEqualTo("ok");
    assertThat(res.get(3).get("outcome").asText()).isEqualTo("stale");
    assertThat(res.get(4).get("outcome").asText()).isEqualTo("not_found");
    assertThat(res.get(5).get("outcome").asText()).isEqualTo("rejected");
    assertThat(res.get(5).get("status").asInt()).isEqualTo(400);
    assertThat(res.get(5).get("detail").asText()).contains("more than once");

    assertThat(server.worker("mixed").journal(inline)).containsExactly("a");
    assertThat(server.worker("mixed").run(finish).get("status").asText()).isEqualTo("completed");
    assertThat(server.worker("mixed").run(finish).get("output").asText()).isEqualTo("done");
    assertThat(server.worker("mixed").journal(finish)).containsExactly("a");
    assertThat(server.worker("mixed").journal(stale)).as("a stale item changes nothing").isEmpty();
    assertThat(server.worker("mixed").run(stale).get("status").asText()).isEqualTo("running");

    // The inline run goes on under the new receipt; the sleeper comes back after its delay.
    Map<String, Object> next =
        item(t.get(inline), "step", step("b", 2), "result", Map.of("status", "completed"));
    next.put("receipt", newReceipt);
    JsonNode second =
        server.worker("mixed").completeBatch(List.of(next)).json().get("results").get(0);
    assertThat(second.get("outcome").asText()).isEqualTo("ok");
    assertThat(server.worker("mixed").journal(inline)).containsExactly("a", "b");
    assertThat(server.worker("mixed").run(inline).get("status").asText()).isEqualTo("completed");
    JsonNode woke = server.worker("mixed").pollUntil(1).get(sleep);
    assertThat(woke).as("the sleeping run is due again").isNotNull();
    assertThat(woke.get("reason").asText()).isEqualTo("resume");
    assertThat(woke.get("journal").findValuesAsText("name")).containsExactly("nap");
  }

  @Test
  void aMalformedItemCostsOnlyItself() {
    long good = server.worker("partly").start(1);
    long bad = server.worker("partly").start(2);
    Map<Long, JsonNode> t = server.worker("partly").pollUntil(2);
    Api.Response r =
        server
            .worker("partly")
            .completeBatch(
                List.of(
                    item(t.get(good), "step", step("fine", 1), "next", Map.of("inline", true)),
                    item(
                        t.get(bad),
                        "step",
                        step("no spaces allowed", 1),
                        "next",
                        Map.of("inline", true)),
                    item(t.get(bad), "result", Map.of("status", "exploded"))));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonNode res = r.json().get("results");
    assertThat(res.get(0).get("outcome").asText()).isEqualTo("ok");
    assertThat(res.get(1).get("outcome").asText()).isEqualTo("rejected");
    assertThat(res.get(1).get("status").asInt()).isEqualTo(400);
    assertThat(res.get(1).get("detail").asText()).contains("step name");
    assertThat(res.get(2).get("outcome").asText()).isEqualTo("rejected");
    assertThat(server.worker("partly").journal(good)).containsExactly("fine");
    assertThat(server.worker("partly").journal(bad)).isEmpty();
    assertThat(server.worker("partly").run(bad).get("status").asText()).isEqualTo("running");
  }

  @Test
  void aStepJournaledAlreadyIsADuplicateAndOnlyAcks() {
    long id = server.worker("twice").start(1);
    long other = server.worker("twice").start(2);
    Map<Long, JsonNode> t = server.worker("twice").pollUntil(2);
    JsonNode task = t.get(id);
    // Alone (the single-run path) and together with another run (the set-based path).
    JsonNode first =
        server
            .worker("twice")
            .completeBatch(
                List.of(item(task, "step", step("a", 1), "next", Map.of("inline", true))))
            .json()
            .get("results")
            .get(0);
    Map<String, Object> again = item(task, "step", step("a", 1), "next", Map.of("inline", true));
    again.put("receipt", first.get("receipt").asText());
    JsonNode res =
        server
            .worker("twice")
            .completeBatch(
                List.of(
                    again,
                    item(t.get(other), "step", step("a", 2), "next", Map.of("inline", true))))
            .json()
            .get("results");
    assertThat(res.get(0).get("outcome").asText()).isEqualTo("duplicate");
    assertThat(res.get(1).get("outcome").asText()).isEqualTo("ok");
    assertThat(server.worker("twice").journal(id)).containsExactly("a");
    assertThat(server.worker("twice").journal(other)).containsExactly("a");
    JsonNode alone =
        server
            .worker("twice")
            .completeBatch(List.of(Map.of("runId", 999_999, "messageId", 1, "receipt", "1")))
            .json()
            .get("results")
            .get(0);
    assertThat(alone.get("outcome").asText()).isEqualTo("rejected");
    JsonNode missing =
        server
            .worker("twice")
            .completeBatch(
                List.of(
                    Map.of(
                        "runId",
                        999_999,
                        "messageId",
                        1,
                        "receipt",
                        "1",
                        "next",
                        Map.of("inline", true),
                        "leaseSeconds",
                        60)))
            .json()
            .get("results")
            .get(0);
    assertThat(missing.get("outcome").asText()).isEqualTo("not_found");
  }

  @Test
  void aBadBatchIsRefusedWhole() {
    server.worker("whole").start(1);
    assertThat(server.worker("whole").completeBatch(List.of()).status()).isEqualTo(400);
    List<Object> many = new ArrayList<>();
    for (int i = 0; i < 101; i++) {
      many.add(Map.of("runId", i + 1, "messageId", 1, "receipt", "1", "next", Map.of()));
    }
    Api.Response tooMany = server.worker("whole").completeBatch(many);
    assertThat(tooMany.status()).isEqualTo(400);
    assertThat(tooMany.isProblem()).isTrue();
    assertThat(api.post("/v1/workflows/whole/tasks/complete", Map.of()).status()).isEqualTo(400);
  }

  /**
   * {@code take} leases due tasks with the answers, as a poll would: one of the runs started
   * meanwhile comes back leased (a poll no longer gets it, and its receipt completes its step). A
   * bad {@code take} refuses the batch and changes nothing; one for versions no run has takes
   * nothing.
   */
  @Test
  void aBatchTakesTasksForTheSlotsItFrees() {
    long first = server.worker("takes").start(1);
    JsonNode task = server.worker("takes").pollUntil(1).get(first);
    long second = server.worker("takes").start(2);
    long third = server.worker("takes").start(3);
    Map<String, Object> finish =
        item(task, "step", step("a", 1), "result", Map.of("status", "completed", "output", 1));

    for (Map<String, Object> bad :
        List.<Map<String, Object>>of(
            Map.of(),
            Map.of("versions", List.of()),
            Map.of("versions", List.of(0)),
            Map.of("versions", List.of(1), "max", 0),
            Map.of("versions", List.of(1), "max", 101),
            Map.of("versions", List.of(1), "leaseSeconds", 0),
            Map.of("versions", List.of(1), "leaseSeconds", 43201),
            Map.of("versions", List.of(1), "unknown", 1))) {
      Api.Response r = server.worker("takes").completeBatch(List.of(finish), bad);
      assertThat(r.status()).as("%s: %s", bad, r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
    }
    assertThat(server.worker("takes").run(first).get("status").asText()).isEqualTo("running");
    assertThat(server.worker("takes").journal(first)).isEmpty();

    Api.Response r =
        server
            .worker("takes")
            .completeBatch(
                List.of(finish), Map.of("versions", List.of(1), "max", 1, "leaseSeconds", 30));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("results").get(0).get("outcome").asText()).isEqualTo("ok");
    assertThat(server.worker("takes").run(first).get("status").asText()).isEqualTo("completed");
    JsonNode tasks = r.json().get("tasks");
    assertThat(tasks).hasSize(1);
    JsonNode taken = tasks.get(0);
    long takenRun = taken.get("runId").asLong();
    assertThat(takenRun).isIn(second, third);

    // Leased: a poll gets only the other run.
    Api.Response polled =
        api.post(
            "/v1/workflows/takes/tasks/poll",
            Map.of("versions", List.of(1), "max", 10, "waitSeconds", 0));
    assertThat(polled.json().get("tasks").findValuesAsText("runId"))
        .containsExactly(String.valueOf(takenRun == second ? third : second));

    // The taken task's receipt holds the lease; a take for versions no run has takes nothing.
    Api.Response next =
        server
            .worker("takes")
            .completeBatch(
                List.of(item(taken, "step", step("a", 2), "next", Map.of("inline", true))),
                Map.of("versions", List.of(7)));
    assertThat(next.status()).as(next.body()).isEqualTo(200);
    assertThat(next.json().get("results").get(0).get("outcome").asText()).isEqualTo("ok");
    assertThat(next.json().get("tasks")).isEmpty();
    assertThat(server.worker("takes").journal(takenRun)).containsExactly("a");
  }

  /** A sleep step completed on the single-run route with {@code next}. */
  private static Api.Response sleep(String wf, long id, JsonNode task, Map<String, Object> next) {
    assertThat(task.get("runId").asLong()).isEqualTo(id);
    return server
        .worker(wf)
        .complete(task, Map.of("step", Map.of("name", "nap", "kind", "sleep"), "next", next));
  }

  /**
   * A sleep lasts its {@code delayMs} from the completion's arrival by the server's clock: an
   * {@code until} (sent by workers of earlier versions, from their own clock) does not end it
   * sooner. A bad {@code until} is still refused and changes nothing.
   */
  @Test
  void aSleepLastsItsDelayWhateverItsUntil() {
    long id = server.worker("until").start(1);
    JsonNode task = server.worker("until").pollUntil(1).get(id);

    Api.Response noDelay =
        sleep("until", id, task, Map.of("until", java.time.Instant.now().toString()));
    assertThat(noDelay.status()).as(noDelay.body()).isEqualTo(400);
    assertThat(noDelay.isProblem()).isTrue();
    Api.Response garbled =
        sleep("until", id, task, Map.of("delayMs", 1000, "until", "after lunch"));
    assertThat(garbled.status()).as(garbled.body()).isEqualTo(400);
    assertThat(server.worker("until").journal(id)).isEmpty();

    // A second by delayMs; the worker's clock would have ended it 100 ms from now.
    long t0 = System.nanoTime();
    Api.Response ok =
        sleep(
            "until",
            id,
            task,
            Map.of("delayMs", 1_000, "until", java.time.Instant.now().plusMillis(100).toString()));
    assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    assertThat(ok.json().get("outcome").asText()).isEqualTo("ok");
    assertThat(server.worker("until").journal(id)).containsExactly("nap");
    JsonNode resumed = server.worker("until").pollUntil(1).get(id);
    double waitedMs = (System.nanoTime() - t0) / 1e6;
    assertThat(resumed.get("reason").asText()).isEqualTo("resume");
    assertThat(waitedMs).isBetween(950.0, 5_000.0);
  }

  /**
   * An until beyond delayMs waits delayMs, no more; one beyond what RFC 3339 can write is refused.
   */
  @Test
  void anUntilBeyondTheDelayWaitsTheDelay() {
    long id = server.worker("until-far").start(1);
    JsonNode task = server.worker("until-far").pollUntil(1).get(id);
    Api.Response beyond =
        sleep(
            "until-far", id, task, Map.of("delayMs", 300, "until", "+1000000000-12-31T23:59:59Z"));
    assertThat(beyond.status()).as(beyond.body()).isEqualTo(400);
    assertThat(beyond.isProblem()).isTrue();
    long t0 = System.nanoTime();
    Api.Response ok =
        sleep("until-far", id, task, Map.of("delayMs", 300, "until", "9999-12-31T23:59:59Z"));
    assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    assertThat(server.worker("until-far").pollUntil(1)).containsKey(id);
    assertThat((System.nanoTime() - t0) / 1e6).isBetween(250.0, 5_000.0);
  }
}
