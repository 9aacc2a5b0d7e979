package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import dev.pgworkflows.testing.Notifications;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A run started while a worker's poll waits on the same server goes straight to that poll, leased
 * in the start's transaction: the poll answers with it, nobody is woken, and the task completes
 * like any other. Runs the poll does not take go the usual way.
 */
class NewRunsGoToWaitingPollsTest {
  // A slow fallback poll: what a poll gets here, it gets from the start or a wake-up.
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000");

  private static final Api api = server.api();

  /** A poll that has waited long enough to be handed runs. */
  private static CompletableFuture<Api.Response> waitingPoll(
      String wf, List<Integer> versions, int max, int seconds) {
    CompletableFuture<Api.Response> poll = server.worker(wf).waitingPoll(versions, max, seconds);
    sleep(50); // handed runs only once it has waited a while
    return poll;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static long startRun(String wf, Map<String, Object> body) {
    return WorkerClient.created(server.worker(wf).startWith(body));
  }

  @Test
  void aStartGoesStraightToTheWaitingPollAndItsTaskCompletes() throws Exception {
    try (Connection listener = server.database().connect()) {
      Notifications wakeups = Notifications.listen(listener);
      CompletableFuture<Api.Response> poll = waitingPoll("hand", List.of(1), 5, 20);
      wakeups.heard();

      long run = startRun("hand", Map.of("input", Map.of("order", 42)));
      Api.Response answer = poll.get();
      assertThat(answer.status()).isEqualTo(200);
      JsonNode tasks = answer.json().get("tasks");
      assertThat(tasks).hasSize(1);
      JsonNode task = tasks.get(0);
      assertThat(task.get("runId").asLong()).isEqualTo(run);
      assertThat(task.get("attempt").asInt()).isEqualTo(1);
      assertThat(task.get("version").asInt()).isEqualTo(1);
      assertThat(task.get("reason").asText()).isEqualTo("start");
      assertThat(task.get("input")).isEqualTo(Api.JSON.readTree("{\"order\": 42}"));
      assertThat(task.get("journal")).isEmpty();
      assertThat(wakeups.heard()).as("the start woke nobody").isEmpty();

      Api.Response done =
          server
              .worker("hand")
              .complete(
                  task,
                  Map.of(
                      "step", Map.of("name", "only", "kind", "run", "output", 7),
                      "result", Map.of("status", "completed", "output", 7)));
      assertThat(done.json().get("outcome").asText()).isEqualTo("ok");
      JsonNode ended = api.get("/v1/workflows/hand/runs/" + run).json();
      assertThat(ended.get("status").asText()).isEqualTo("completed");
      assertThat(api.get("/v1/queues/__wf_hand").json().get("metrics").get("depth").asLong())
          .isZero();
    }
  }

  @Test
  void aBatchFillsThePollAndLeavesTheRestForAnother() throws Exception {
    CompletableFuture<Api.Response> poll = waitingPoll("handb", List.of(1), 2, 20);
    Api.Response started =
        api.post(
            "/v1/workflows/handb/runs/batch",
            Map.of("runs", List.of(Map.of("input", 1), Map.of("input", 2), Map.of("input", 3))));
    assertThat(started.status()).as(started.body()).isEqualTo(200);
    List<Long> runs = new ArrayList<>();
    started.json().get("runs").forEach(r -> runs.add(r.get("runId").asLong()));

    JsonNode tasks = poll.get().json().get("tasks");
    assertThat(tasks).hasSize(2);
    assertThat(List.of(tasks.get(0).get("runId").asLong(), tasks.get(1).get("runId").asLong()))
        .containsExactly(runs.get(0), runs.get(1));
    JsonNode rest =
        api.post(
                "/v1/workflows/handb/tasks/poll",
                Map.of("versions", List.of(1), "max", 5, "waitSeconds", 0))
            .json()
            .get("tasks");
    assertThat(rest).hasSize(1);
    assertThat(rest.get(0).get("runId").asLong()).isEqualTo(runs.get(2));
  }

  @Test
  void aPollForOtherVersionsIsNotHandedTheRunAndStillAnswers() throws Exception {
    // Version 2 is the workflow's newest: a start without a version gets it.
    api.post("/v1/workflows/handv/tasks/poll", Map.of("versions", List.of(2), "waitSeconds", 0));
    try (Connection listener = server.database().connect()) {
      Notifications wakeups = Notifications.listen(listener);
      CompletableFuture<Api.Response> poll = waitingPoll("handv", List.of(1), 5, 2);
      wakeups.heard();
      long newest = startRun("handv", Map.of("input", "a"));
      long pinned = startRun("handv", Map.of("input", "b", "version", 2));
      assertThat(wakeups.heard()).as("runs nobody took wake listeners").contains("__wf_handv");

      long asked = System.nanoTime();
      Api.Response answer = poll.get();
      assertThat(answer.status()).isEqualTo(200);
      assertThat(answer.json().get("tasks")).isEmpty();
      assertThat((System.nanoTime() - asked) / 1_000_000).isLessThan(10_000);

      JsonNode tasks =
          api.post(
                  "/v1/workflows/handv/tasks/poll",
                  Map.of("versions", List.of(2), "max", 5, "waitSeconds", 0))
              .json()
              .get("tasks");
      List<Long> got = new ArrayList<>();
      tasks.forEach(t -> got.add(t.get("runId").asLong()));
      assertThat(got).containsExactly(newest, pinned);
    }
  }
}
