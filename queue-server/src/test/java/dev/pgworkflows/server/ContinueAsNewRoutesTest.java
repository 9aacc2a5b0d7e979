package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST .../continue-as-new} ends a run and starts its successor in one transaction, linked
 * both ways; a lost lease changes nothing; a repeat learns the successor; bad input is a 400 naming
 * the field. {@code GET .../chain} lists a chain first to last and {@code GET .../chain/last} finds
 * its last run, which signals and cancels sent to an ended run of it reach. Every exchange is
 * checked against openapi.yaml.
 */
class ContinueAsNewRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  @Test
  void theRunEndsAndItsSuccessorStartsLinkedBothWaysWithTheHeldStepJournaled() {
    WorkerClient worker = server.worker("renew");
    Map<String, Object> start = new LinkedHashMap<>();
    start.put("input", Map.of("month", 1));
    start.put("concurrencyKey", "customer-7");
    start.put("priority", 3);
    long first = WorkerClient.created(worker.startWith(start));
    JsonNode task = worker.pollOne();

    Map<String, Object> withSeconds =
        body(task, Map.of("month", 2), step("charge", Map.of("ok", true)));
    withSeconds.put("stepSeconds", 0.012);
    Api.Response r = server.api().post(path("renew", first), withSeconds);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("outcome").asText()).isEqualTo("ok");
    long second = r.json().get("continuedTo").asLong();
    assertThat(second).isGreaterThan(first);

    JsonNode ended = worker.run(first);
    assertThat(ended.get("status").asText()).isEqualTo("completed");
    assertThat(ended.get("continuedTo").asLong()).isEqualTo(second);
    assertThat(ended.get("output").get("continuedTo").asLong()).isEqualTo(second);
    assertThat(ended.has("continuedFrom")).isFalse();
    assertThat(worker.journal(first)).containsExactly("charge");

    JsonNode next = worker.run(second);
    assertThat(next.get("status").asText()).isEqualTo("running");
    assertThat(next.get("continuedFrom").asLong()).isEqualTo(first);
    assertThat(next.has("continuedTo")).isFalse();
    assertThat(next.get("input").get("month").asInt()).isEqualTo(2);
    assertThat(next.get("concurrencyKey").asText()).isEqualTo("customer-7");
    assertThat(next.get("priority").asInt()).isEqualTo(3);
    assertThat(worker.journal(second)).isEmpty();

    // The successor is a task like any start's, with a fresh journal.
    JsonNode successorTask = worker.pollOne();
    assertThat(successorTask.get("runId").asLong()).isEqualTo(second);
    assertThat(successorTask.get("journal")).isEmpty();

    // Listings show the links too.
    JsonNode page = server.api().get("/v1/workflows/renew/runs").json();
    assertThat(page.get("runs").get(0).get("continuedFrom").asLong()).isEqualTo(first);
    assertThat(page.get("runs").get(1).get("continuedTo").asLong()).isEqualTo(second);
  }

  @Test
  void aStaleReceiptChangesNothingAndARepeatAfterTheContinuationLearnsTheSuccessor()
      throws Exception {
    WorkerClient worker = server.worker("renew-stale");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();

    Map<String, Object> stale = body(task, 2, step("s", 1));
    stale.put("receipt", "1");
    Api.Response r = server.api().post(path("renew-stale", run), stale);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("outcome").asText()).isEqualTo("stale");
    assertThat(r.json().has("continuedTo")).isFalse();
    assertThat(worker.run(run).get("status").asText()).isEqualTo("running");
    assertThat(worker.journal(run)).isEmpty();
    assertThat(runsOf("renew-stale")).isEqualTo(1);

    Api.Response ok = continueAsNew("renew-stale", task, 2, null);
    long successor = ok.json().get("continuedTo").asLong();
    Api.Response again = continueAsNew("renew-stale", task, 3, step("s", 1));
    assertThat(again.json().get("outcome").asText()).as(again.body()).isEqualTo("not_running");
    assertThat(again.json().get("continuedTo").asLong()).isEqualTo(successor);
    assertThat(runsOf("renew-stale")).isEqualTo(2);
    assertThat(worker.journal(run)).isEmpty();
  }

  @Test
  void twoContinuationsRacingUnderOneLeaseMakeOneSuccessor() throws Exception {
    WorkerClient worker = server.worker("renew-race");
    for (int round = 0; round < 10; round++) {
      long run = worker.start(round);
      JsonNode task = worker.pollOne();
      assertThat(task.get("runId").asLong()).isEqualTo(run);
      List<CompletableFuture<Api.Response>> racing = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        Object step = step("s" + i, i);
        racing.add(CompletableFuture.supplyAsync(() -> continueAsNew("renew-race", task, 1, step)));
      }
      List<String> outcomes = new ArrayList<>();
      Set<Long> successors = new HashSet<>();
      for (CompletableFuture<Api.Response> r : racing) {
        JsonNode answer = r.get(30, TimeUnit.SECONDS).json();
        outcomes.add(answer.get("outcome").asText());
        successors.add(answer.get("continuedTo").asLong());
      }
      assertThat(outcomes).containsExactlyInAnyOrder("ok", "not_running");
      assertThat(successors).hasSize(1);
      // The winner's held step alone is journaled.
      assertThat(worker.journal(run)).hasSize(1);
      assertThat(worker.run(run).get("continuedTo").asLong())
          .isEqualTo(successors.iterator().next());
      // The successor is taken so the next round polls its own run.
      worker.pollOne();
    }
    assertThat(runsOf("renew-race")).isEqualTo(20);
  }

  @Test
  void theChainIsListedFirstToLastFromAnyOfItsRunsAndPaged() {
    WorkerClient worker = server.worker("renew-chain");
    long first = worker.start(0);
    long[] ids = new long[4];
    ids[0] = first;
    for (int i = 1; i < 4; i++) {
      JsonNode task = worker.pollOne();
      ids[i] = continueAsNew("renew-chain", task, i, null).json().get("continuedTo").asLong();
    }
    for (long any : ids) {
      JsonNode chain = server.api().get("/v1/workflows/renew-chain/runs/" + any + "/chain").json();
      assertThat(chain.get("runs").findValues("runId").stream().map(JsonNode::asLong).toList())
          .containsExactly(ids[0], ids[1], ids[2], ids[3]);
      assertThat(chain.has("nextCursor")).isFalse();
    }
    Api.Response page =
        server.api().get("/v1/workflows/renew-chain/runs/" + ids[3] + "/chain?limit=3");
    assertThat(page.json().get("nextCursor").asText()).isEqualTo(Long.toString(ids[2]));
    JsonNode rest =
        server
            .api()
            .get("/v1/workflows/renew-chain/runs/" + ids[0] + "/chain?limit=3&cursor=" + ids[2])
            .json();
    assertThat(rest.get("runs").findValues("runId").stream().map(JsonNode::asLong).toList())
        .containsExactly(ids[3]);

    long alone = worker.start(9);
    JsonNode single = server.api().get("/v1/workflows/renew-chain/runs/" + alone + "/chain").json();
    assertThat(single.get("runs").findValues("runId").stream().map(JsonNode::asLong).toList())
        .containsExactly(alone);
  }

  @Test
  void theChainsLastRunIsFoundFromAnyRunAndSignalsAndCancelsToAnEndedRunReachIt() {
    WorkerClient worker = server.worker("renew-last");
    long first = worker.start(0);
    long second =
        continueAsNew("renew-last", worker.pollOne(), 1, null).json().get("continuedTo").asLong();
    long third =
        continueAsNew("renew-last", worker.pollOne(), 2, null).json().get("continuedTo").asLong();
    for (long any : new long[] {first, second, third}) {
      Api.Response last = server.api().get("/v1/workflows/renew-last/runs/" + any + "/chain/last");
      assertThat(last.status()).as(last.body()).isEqualTo(200);
      assertThat(last.json().get("runId").asLong()).isEqualTo(third);
      assertThat(last.json().get("continuedFrom").asLong()).isEqualTo(second);
    }
    long alone = worker.start(9);
    assertThat(
            server
                .api()
                .get("/v1/workflows/renew-last/runs/" + alone + "/chain/last")
                .json()
                .get("runId")
                .asLong())
        .isEqualTo(alone);

    Api.Response signal =
        server.api().post("/v1/workflows/renew-last/runs/" + first + "/signals/tick", 1);
    assertThat(signal.status()).as(signal.body()).isEqualTo(200);
    assertThat(signal.json().get("outcome").asText()).isEqualTo("buffered");
    JsonNode inbox = server.api().get("/v1/workflows/renew-last/runs/" + third + "/signals").json();
    assertThat(inbox.get("signals").findValues("event").stream().map(JsonNode::asText).toList())
        .containsExactly("tick");

    Api.Response cancel = server.api().delete("/v1/workflows/renew-last/runs/" + first);
    assertThat(cancel.status()).as(cancel.body()).isEqualTo(200);
    assertThat(cancel.json().get("cancelled").asBoolean()).isTrue();
    assertThat(worker.run(third).get("status").asText()).isEqualTo("cancelled");
    assertThat(worker.run(first).get("status").asText()).isEqualTo("completed");

    Api.Response missing =
        server.api().get("/v1/workflows/renew-last/runs/" + (third + 1000) + "/chain/last");
    assertThat(missing.status()).as(missing.body()).isEqualTo(404);
    assertThat(missing.isProblem()).isTrue();
    Api.Response otherWorkflow =
        server.api().get("/v1/workflows/renew-other/runs/" + first + "/chain/last");
    assertThat(otherWorkflow.status()).as(otherWorkflow.body()).isEqualTo(404);
    Api.Response badId = server.api().get("/v1/workflows/renew-last/runs/abc/chain/last");
    assertThat(badId.status()).as(badId.body()).isEqualTo(400);
    assertThat(badId.isProblem()).isTrue();
  }

  @Test
  void theIdempotencyKeyMovesToTheSuccessorSoARepeatedStartFindsTheNewestRun() {
    WorkerClient worker = server.worker("renew-key");
    Api.Response started = worker.startWith(Map.of("input", 1, "idempotencyKey", "sub-42"));
    long first = WorkerClient.created(started);
    long second =
        continueAsNew("renew-key", worker.pollOne(), 2, null).json().get("continuedTo").asLong();

    Api.Response repeat = worker.startWith(Map.of("input", 1, "idempotencyKey", "sub-42"));
    assertThat(repeat.status()).as(repeat.body()).isEqualTo(200);
    assertThat(repeat.json().get("runId").asLong()).isEqualTo(second);
    assertThat(worker.run(second).get("idempotencyKey").asText()).isEqualTo("sub-42");
    assertThat(worker.run(first).has("idempotencyKey")).isFalse();
  }

  @Test
  void badInputIsA400NamingTheFieldAndChangesNothing() throws Exception {
    WorkerClient worker = server.worker("renew-bad");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    Map<String, Object> noMessage = body(task, 2, null);
    noMessage.remove("messageId");
    Map<String, Object> noReceipt = body(task, 2, null);
    noReceipt.remove("receipt");
    Map<String, Object> badReceipt = body(task, 2, null);
    badReceipt.put("receipt", "not a number");
    Map<String, Object> negativeSeconds = body(task, 2, step("a", 1));
    negativeSeconds.put("stepSeconds", -1);
    Object[][] cases = {
      {noMessage, "messageId"},
      {noReceipt, "receipt"},
      {badReceipt, "receipt"},
      {body(task, 2, step("not a name!", 1)), "step.name"},
      {body(task, 2, Map.of("name", "a", "kind", "nap")), "step.kind"},
      {body(task, 2, Map.of("name", "a")), "step.kind"},
      {body(task, 2, Map.of("name", "a", "kind", "run", "error", "no")), "step.error"},
      {negativeSeconds, "stepSeconds"},
    };
    for (Object[] c : cases) {
      Api.Response r = server.api().post(path("renew-bad", run), c[0]);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("field").asText()).as(r.body()).isEqualTo(c[1]);
    }
    Map<String, Object> bogus = body(task, 2, null);
    bogus.put("bogus", true);
    Api.Response unknown = server.api().post(path("renew-bad", run), bogus);
    assertThat(unknown.status()).as(unknown.body()).isEqualTo(400);
    assertThat(unknown.body()).contains("bogus");

    Api.Response missing = server.api().post(path("renew-bad", run + 1000), body(task, 2, null));
    assertThat(missing.status()).as(missing.body()).isEqualTo(404);
    assertThat(missing.isProblem()).isTrue();
    Api.Response otherWorkflow = server.api().post(path("renew-other", run), body(task, 2, null));
    assertThat(otherWorkflow.status()).as(otherWorkflow.body()).isEqualTo(404);
    Api.Response badLimit =
        server.api().get("/v1/workflows/renew-bad/runs/" + run + "/chain?limit=0");
    assertThat(badLimit.status()).as(badLimit.body()).isEqualTo(400);
    assertThat(badLimit.json().get("field").asText()).isEqualTo("limit");

    assertThat(worker.run(run).get("status").asText()).isEqualTo("running");
    assertThat(worker.journal(run)).isEmpty();
    assertThat(runsOf("renew-bad")).isEqualTo(1);
  }

  private static long runsOf(String workflow) throws Exception {
    try (Connection c = server.database().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = '"
                    + workflow
                    + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String path(String workflow, long run) {
    return "/v1/workflows/" + workflow + "/runs/" + run + "/continue-as-new";
  }

  private static Map<String, Object> body(JsonNode task, Object input, Object step) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("messageId", task.get("messageId").asLong());
    m.put("receipt", task.get("receipt").asText());
    m.put("input", input);
    if (step != null) {
      m.put("step", step);
    }
    return m;
  }

  private static Api.Response continueAsNew(
      String workflow, JsonNode task, Object input, Object step) {
    return server.api().post(path(workflow, task.get("runId").asLong()), body(task, input, step));
  }
}
