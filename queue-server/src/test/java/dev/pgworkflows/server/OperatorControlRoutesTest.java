package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An operator's controls over HTTP: pausing and resuming workflows, runs and queue groups, parking
 * and redriving a group's head, restarting a run from a step and forking one; bad input and wrong
 * states change nothing, each action is audited, and every exchange is checked against
 * openapi.yaml.
 */
class OperatorControlRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static String runPath(String workflow, long run) {
    return "/v1/workflows/" + workflow + "/runs/" + run;
  }

  private static JsonNode tasks(WorkerClient worker, int waitSeconds) {
    Api.Response r = worker.poll(List.of(1), 10, waitSeconds);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().get("tasks");
  }

  @Test
  void aPausedWorkflowTakesStartsAndItsResumeWakesAWaitingPoll() throws Exception {
    WorkerClient worker = server.worker("pausable");
    long first = worker.start(1);
    Api.Response paused = api.post("/v1/workflows/pausable/pause", null);
    assertThat(paused.status()).as(paused.body()).isEqualTo(200);
    assertThat(paused.json().get("paused").asBoolean()).isTrue();
    assertThat(paused.json().get("pausedAt").isTextual()).isTrue();
    long second = worker.start(2);
    assertThat(tasks(worker, 0)).isEmpty();
    JsonNode listed = api.get("/v1/workflows").json().get("workflows");
    assertThat(listed.findValues("name").stream().map(JsonNode::asText)).contains("pausable");
    for (JsonNode w : listed) {
      assertThat(w.get("paused").asBoolean()).isEqualTo(w.get("name").asText().equals("pausable"));
    }

    CompletableFuture<Api.Response> waiting = worker.waitingPoll(List.of(1), 10, 20);
    Api.Response resumed = api.post("/v1/workflows/pausable/resume", null);
    assertThat(resumed.json().get("paused").asBoolean()).isFalse();
    assertThat(resumed.json().get("pausedAt").isNull()).isTrue();
    List<Long> runs = new ArrayList<>();
    waiting
        .get(10, TimeUnit.SECONDS)
        .json()
        .get("tasks")
        .forEach(t -> runs.add(t.get("runId").asLong()));
    assertThat(runs).containsExactlyInAnyOrder(first, second);
  }

  @Test
  void pausingAnUnknownOrMalformedWorkflowChangesNothing() {
    Api.Response unknown = api.post("/v1/workflows/never-started/pause", null);
    assertThat(unknown.status()).as(unknown.body()).isEqualTo(404);
    assertThat(api.post("/v1/workflows/Bad_Name/pause", null).status()).isEqualTo(400);
    assertThat(api.get("/v1/workflows").json().get("workflows").findValuesAsText("name"))
        .doesNotContain("never-started");
  }

  @Test
  void aRunPausedDuringItsStepIsHandedBackAndGoesOnAfterItsResume() {
    WorkerClient worker = server.worker("one-run");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    Api.Response paused = api.post(runPath("one-run", run) + "/pause", null);
    assertThat(paused.status()).as(paused.body()).isEqualTo(200);
    assertThat(paused.json().get("paused").asBoolean()).isTrue();

    Api.Response inline =
        worker.complete(
            task, Map.of("step", WorkerClient.step("a", 1), "next", Map.of("inline", true)));
    assertThat(inline.json().get("outcome").asText()).as(inline.body()).isEqualTo("paused");
    assertThat(tasks(worker, 1)).isEmpty();

    Api.Response resumed = api.post(runPath("one-run", run) + "/resume", null);
    assertThat(resumed.json().get("paused").asBoolean()).isFalse();
    JsonNode again = worker.pollOne();
    assertThat(again.get("runId").asLong()).isEqualTo(run);
    assertThat(again.get("journal").findValuesAsText("name")).containsExactly("a");
  }

  @Test
  void pausingARunThatEndedIsAConflict() {
    WorkerClient worker = server.worker("ended-run");
    long run = worker.start(1);
    assertThat(api.delete(runPath("ended-run", run)).status()).isEqualTo(200);
    Api.Response refused = api.post(runPath("ended-run", run) + "/pause", null);
    assertThat(refused.status()).as(refused.body()).isEqualTo(409);
    assertThat(worker.run(run).get("paused").asBoolean()).isFalse();
    assertThat(api.post(runPath("ended-run", 999_999) + "/pause", null).status()).isEqualTo(404);
  }

  /** A run with steps a and b journaled, failed. */
  private static long failedRun(WorkerClient worker) {
    long run = worker.start(Map.of("n", 1));
    JsonNode task = worker.pollOne();
    Api.Response a =
        worker.complete(
            task, Map.of("step", WorkerClient.step("a", 1), "next", Map.of("inline", true)));
    Map<String, Object> last = new HashMap<>();
    last.put("receipt", a.json().get("receipt").asText());
    last.put("step", WorkerClient.step("b", 2));
    last.put(
        "result", Map.of("status", "failed", "error", Map.of("type", "Boom", "message", "boom")));
    Api.Response b = worker.complete(task, last);
    assertThat(b.body()).as(b.body()).contains("\"outcome\":\"ok\"");
    return run;
  }

  @Test
  void aRestartSetsLaterStepsAsideAndRunsTheRunAgain() {
    WorkerClient worker = server.worker("restartable");
    long run = failedRun(worker);
    String restart = runPath("restartable", run) + "/restart";

    Api.Response noStep = api.post(restart, Map.of("fromStep", "zz"));
    assertThat(noStep.status()).as(noStep.body()).isEqualTo(400);
    assertThat(noStep.json().get("field").asText()).isEqualTo("fromStep");
    assertThat(api.post(restart, Map.of()).json().get("field").asText()).isEqualTo("fromStep");
    assertThat(worker.run(run).get("status").asText()).isEqualTo("failed");

    Api.Response restarted = api.post(restart, Map.of("fromStep", "b"));
    assertThat(restarted.status()).as(restarted.body()).isEqualTo(200);
    assertThat(restarted.json().get("status").asText()).isEqualTo("running");
    assertThat(restarted.json().has("error")).isFalse();
    assertThat(worker.journal(run)).containsExactly("a");
    JsonNode all =
        api.get(runPath("restartable", run) + "/steps?setAside=true").json().get("steps");
    assertThat(all.findValuesAsText("name")).containsExactly("a", "b");
    assertThat(all.get(1).get("setAside").asBoolean()).isTrue();
    assertThat(api.get(runPath("restartable", run) + "/steps?setAside=maybe").status())
        .isEqualTo(400);

    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(run);
    assertThat(task.get("journal").findValuesAsText("name")).containsExactly("a");
    Api.Response twice = api.post(restart, Map.of("fromStep", "a"));
    assertThat(twice.status()).as(twice.body()).isEqualTo(409);
    assertThat(worker.journal(run)).containsExactly("a");
  }

  @Test
  void aForkIsANewRunWithTheEarlierStepsAndItsOwnInput() {
    WorkerClient worker = server.worker("forkable");
    long origin = failedRun(worker);
    String fork = runPath("forkable", origin) + "/fork";
    assertThat(api.post(fork, Map.of("fromStep", "nope")).status()).isEqualTo(400);
    assertThat(api.post(fork, Map.of("fromStep", "b", "extra", 1)).status()).isEqualTo(400);

    Api.Response forked = api.post(fork, Map.of("fromStep", "b", "input", Map.of("n", 2)));
    assertThat(forked.status()).as(forked.body()).isEqualTo(201);
    long run = forked.json().get("runId").asLong();
    assertThat(run).isNotEqualTo(origin);
    assertThat(forked.json().get("forkedFrom").get("runId").asLong()).isEqualTo(origin);
    assertThat(forked.json().get("forkedFrom").get("step").asText()).isEqualTo("b");
    assertThat(forked.json().get("input").get("n").asInt()).isEqualTo(2);
    assertThat(worker.journal(run)).containsExactly("a");
    assertThat(worker.run(origin).get("status").asText()).isEqualTo("failed");
    assertThat(worker.run(origin).has("forkedFrom")).isFalse();
    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(run);
    assertThat(task.get("reason").asText()).isEqualTo("start");

    Api.Response sameInput = api.post(fork, Map.of("fromStep", "a"));
    assertThat(sameInput.json().get("input").get("n").asInt()).isEqualTo(1);
  }

  @Test
  void aPausedGroupIsPassedByAndAParkedHeadCanBeRedriven() {
    assertThat(api.put("/v1/queues/grouped", Map.of("fifo", true)).status()).isEqualTo(201);
    String send = "/v1/queues/grouped/messages";
    long m1 = api.post(send, Map.of("body", 1, "groupId", "g1")).json().get("ids").get(0).asLong();
    long m2 = api.post(send, Map.of("body", 2, "groupId", "g1")).json().get("ids").get(0).asLong();
    long m3 = api.post(send, Map.of("body", 3, "groupId", "g2")).json().get("ids").get(0).asLong();

    Api.Response paused = api.post("/v1/queues/grouped/groups/g1/pause", null);
    assertThat(paused.status()).as(paused.body()).isEqualTo(200);
    assertThat(paused.json().get("paused").asBoolean()).isTrue();
    assertThat(received()).containsExactly(m3);

    Api.Response parked = api.post("/v1/queues/grouped/groups/g1/park", null);
    assertThat(parked.status()).as(parked.body()).isEqualTo(200);
    assertThat(parked.json().get("messageId").asLong()).isEqualTo(m1);
    long parkedId = parked.json().get("id").asLong();
    JsonNode list = api.get("/v1/queues/grouped/parked").json().get("messages");
    assertThat(list.findValuesAsText("groupId")).containsExactly("g1");

    assertThat(
            api.post("/v1/queues/grouped/groups/g1/resume", null).json().get("paused").asBoolean())
        .isFalse();
    assertThat(received()).containsExactly(m2);
    Api.Response back = api.post("/v1/queues/grouped/parked/" + parkedId + "/redrive", null);
    assertThat(back.status()).as(back.body()).isEqualTo(200);
    assertThat(back.json().get("messageId").asLong()).isGreaterThan(m3);
    assertThat(api.get("/v1/queues/grouped/parked").json().get("messages")).isEmpty();

    assertThat(api.post("/v1/queues/grouped/parked/" + parkedId + "/redrive", null).status())
        .isEqualTo(404);
    assertThat(api.post("/v1/queues/grouped/groups/empty/park", null).status()).isEqualTo(404);
    assertThat(api.post("/v1/queues/__wf_pausable/groups/1/pause", null).status()).isEqualTo(409);
    assertThat(api.post("/v1/queues/nowhere/groups/g1/pause", null).status()).isEqualTo(404);
    String longGroup = "g".repeat(129);
    assertThat(api.post("/v1/queues/grouped/groups/" + longGroup + "/pause", null).status())
        .isEqualTo(400);
  }

  @Test
  void aGroupOfAQueueThatIsNotFifoCannotBePausedAndNothingChanges() {
    assertThat(api.put("/v1/queues/unordered", Map.of("fifo", false)).status()).isEqualTo(201);
    long m =
        api.post("/v1/queues/unordered/messages", Map.of("body", 1, "groupId", "g"))
            .json()
            .get("ids")
            .get(0)
            .asLong();

    for (String action : List.of("pause", "resume")) {
      Api.Response r = api.post("/v1/queues/unordered/groups/g/" + action, null);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.json().get("detail").asText())
          .contains("group pauses are for FIFO queues", "\"unordered\"");
    }
    Api.Response got = api.post("/v1/queues/unordered/messages/receive", Map.of("max", 10));
    assertThat(got.status()).as(got.body()).isEqualTo(200);
    assertThat(got.json().get("messages").findValuesAsText("id")).containsExactly(Long.toString(m));
  }

  @Test
  void operatorControlsAreOnTheAuditTrail() {
    WorkerClient worker = server.worker("audited-ops");
    long run = worker.start(1);
    api.post("/v1/workflows/audited-ops/pause", null);
    api.post("/v1/workflows/audited-ops/resume", null);
    api.post(runPath("audited-ops", run) + "/pause", null);
    api.post(runPath("audited-ops", run) + "/resume", null);
    long failed = failedRun(worker);
    api.post(runPath("audited-ops", failed) + "/restart", Map.of("fromStep", "b"));
    api.post(runPath("audited-ops", failed) + "/fork", Map.of("fromStep", "a"));
    api.put("/v1/queues/audited-q", Map.of("fifo", true));
    api.post("/v1/queues/audited-q/messages", Map.of("body", 1, "groupId", "g"));
    api.post("/v1/queues/audited-q/groups/g/pause", null);
    api.post("/v1/queues/audited-q/groups/g/resume", null);
    long parked = api.post("/v1/queues/audited-q/groups/g/park", null).json().get("id").asLong();
    api.post("/v1/queues/audited-q/parked/" + parked + "/redrive", null);
    List<String> actions =
        api.get("/v1/audit?limit=1000").json().get("entries").findValuesAsText("action");
    assertThat(actions)
        .contains(
            "workflow.pause",
            "workflow.resume",
            "run.pause",
            "run.resume",
            "run.restart",
            "run.fork",
            "group.pause",
            "group.resume",
            "group.park",
            "parked.redrive");
  }

  private static List<Long> received() {
    List<Long> ids = new ArrayList<>();
    api.post("/v1/queues/grouped/messages/receive", Map.of("max", 10))
        .json()
        .get("messages")
        .forEach(m -> ids.add(m.get("id").asLong()));
    return ids;
  }
}
