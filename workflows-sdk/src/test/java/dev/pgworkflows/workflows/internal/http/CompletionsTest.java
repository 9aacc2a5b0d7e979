package dev.pgworkflows.workflows.internal.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Completions from many task threads at once: each thread gets the answer for its own completion
 * (batched with others or not), a completion the server rejects fails only its own thread, and
 * nothing is accepted once closed.
 */
class CompletionsTest {
  private static TestServer server;
  private static WorkflowClient client;
  private static Transport transport;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    client = WorkflowClient.connect(server.url());
    transport = new Transport(server.url(), null);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** Starts n runs of {@code workflow} and leases their tasks. */
  private static List<Task> leased(String workflow, int n) {
    for (int i = 0; i < n; i++) {
      client.start(workflow, i);
    }
    List<Task> tasks = new ArrayList<>();
    while (tasks.size() < n) {
      JsonNode r =
          transport.post(
              "/v1/workflows/" + workflow + "/tasks/poll",
              Map.of("versions", List.of(1), "max", n - tasks.size(), "waitSeconds", 1));
      for (JsonNode t : r.get("tasks")) {
        tasks.add(Transport.JSON.convertValue(t, Task.class));
      }
    }
    return tasks;
  }

  private static Map<String, Object> inline(Task t, String step) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", t.messageId());
    body.put("receipt", t.receipt());
    body.put("leaseSeconds", 60);
    body.put("step", Map.of("name", step, "kind", "run", "output", t.runId()));
    body.put("next", Map.of("inline", true));
    return body;
  }

  @Test
  void everyThreadGetsItsOwnAnswer() throws Exception {
    int n = 48;
    List<Task> tasks = leased("batched", n);
    Completions completions = new Completions(transport, "batched");
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<JsonNode>> answers = new ArrayList<>();
      for (Task t : tasks) {
        answers.add(
            pool.submit(
                () -> {
                  go.await();
                  return completions.complete(t.runId(), inline(t, "s"));
                }));
      }
      go.countDown();
      for (int i = 0; i < n; i++) {
        JsonNode a = answers.get(i).get();
        assertThat(a.get("outcome").asText()).isEqualTo("ok");
        assertThat(a.get("messageId").asLong())
            .as("the answer is for this thread's run")
            .isEqualTo(tasks.get(i).messageId());
      }
    } finally {
      pool.shutdownNow();
      completions.close();
    }
    for (Task t : tasks) {
      List<StepInfo> steps = client.steps("batched", t.runId());
      assertThat(steps).extracting(StepInfo::name).containsExactly("s");
      assertThat(steps.get(0).output().asLong()).isEqualTo(t.runId());
    }
  }

  @Test
  void aRejectedCompletionFailsOnlyItsOwnThread() throws Exception {
    List<Task> tasks = leased("mixed", 2);
    Completions completions = new Completions(transport, "mixed");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<JsonNode> good =
          pool.submit(
              () -> completions.complete(tasks.get(0).runId(), inline(tasks.get(0), "fine")));
      Future<JsonNode> bad =
          pool.submit(
              () -> completions.complete(tasks.get(1).runId(), inline(tasks.get(1), "bad name!")));
      assertThat(good.get().get("outcome").asText()).isEqualTo("ok");
      assertThatThrownBy(bad::get)
          .hasCauseInstanceOf(ApiException.class)
          .cause()
          .hasMessageContaining("step");
    } finally {
      pool.shutdownNow();
      completions.close();
    }
    assertThat(client.steps("mixed", tasks.get(1).runId())).isEmpty();
  }

  private static Map<String, Object> finish(Task t) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", t.messageId());
    body.put("receipt", t.receipt());
    body.put("leaseSeconds", 60);
    body.put("result", Map.of("status", "completed", "output", t.runId()));
    return body;
  }

  /**
   * With a {@link TakeBack} open, a completion that frees its slot brings a due task back, handed
   * over on its own thread before it returns; one that does not free a slot, or made while the
   * take-back is closed, takes nothing.
   */
  @Test
  void aCompletionThatFreesItsSlotBringsTheNextTask() {
    List<Task> tasks = leased("handed", 3);
    long due = client.start("handed", 99).runId();
    AtomicBoolean open = new AtomicBoolean(false);
    List<JsonNode> handed = new ArrayList<>();
    Thread self = Thread.currentThread();
    Completions completions =
        new Completions(
            transport,
            "handed",
            new TakeBack(
                List.of(1),
                30,
                open::get,
                t -> {
                  assertThat(Thread.currentThread()).isSameAs(self);
                  handed.add(t);
                }));
    try {
      assertThat(
              completions
                  .complete(tasks.get(0).runId(), finish(tasks.get(0)), true)
                  .get("outcome")
                  .asText())
          .isEqualTo("ok");
      assertThat(handed).as("closed: nothing taken").isEmpty();
      open.set(true);
      assertThat(
              completions
                  .complete(tasks.get(1).runId(), inline(tasks.get(1), "one"), false)
                  .get("outcome")
                  .asText())
          .isEqualTo("ok");
      assertThat(handed).as("no slot freed: nothing taken").isEmpty();
      assertThat(
              completions
                  .complete(tasks.get(2).runId(), finish(tasks.get(2)), true)
                  .get("outcome")
                  .asText())
          .isEqualTo("ok");
      assertThat(handed).hasSize(1);
      Task next = Transport.JSON.convertValue(handed.get(0), Task.class);
      assertThat(next.runId()).isEqualTo(due);
      assertThat(completions.complete(due, inline(next, "first"), false).get("outcome").asText())
          .as("the handed task's lease is held")
          .isEqualTo("ok");
    } finally {
      completions.close();
    }
    assertThat(client.steps("handed", due)).extracting(StepInfo::name).containsExactly("first");
  }

  @Test
  void nothingIsSentOnceClosed() {
    List<Task> tasks = leased("closed", 1);
    Completions completions = new Completions(transport, "closed");
    completions.close();
    assertThatThrownBy(() -> completions.complete(tasks.get(0).runId(), inline(tasks.get(0), "s")))
        .isInstanceOf(ServerUnavailableException.class);
    assertThat(client.steps("closed", tasks.get(0).runId())).isEmpty();
  }
}
