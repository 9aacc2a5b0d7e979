package dev.pgworkflows.workflows.internal.link;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.LongNode;
import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.CompletionOutcome;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.RunResult;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.internal.http.HttpWorkerTransport;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.replay.Task;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Completions from many task threads at once: each thread gets the answer for its own completion
 * (batched with others or not), a completion the server rejects fails only its own thread, and
 * nothing is accepted once closed.
 */
class CompletionsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();
  private static WorkflowClient client;
  private static Transport http;
  private static WorkerTransport transport;

  @BeforeAll
  static void connect() {
    client = server.client();
    http = new Transport(server.url(), null);
    transport = new HttpWorkerTransport(http, http);
  }

  /** Starts n runs of {@code workflow} and leases their tasks. */
  private static List<Task> leased(String workflow, int n) {
    for (int i = 0; i < n; i++) {
      client.start(workflow, i);
    }
    List<Task> tasks = new ArrayList<>();
    while (tasks.size() < n) {
      JsonNode r =
          http.post(
              "/v1/workflows/" + workflow + "/tasks/poll",
              Map.of("versions", List.of(1), "max", n - tasks.size(), "waitSeconds", 1));
      for (JsonNode t : r.get("tasks")) {
        tasks.add(Transport.JSON.convertValue(t, Task.class));
      }
    }
    return tasks;
  }

  private static Completion inline(Task t, String step) {
    return new Completion(
        t.runId(),
        t.messageId(),
        t.receipt(),
        new StepRecord(step, "run", LongNode.valueOf(t.runId()), null, null),
        new Next(null, null, true, null, null),
        null,
        60,
        null,
        null);
  }

  @Test
  void everyThreadGetsItsOwnAnswer() throws Exception {
    int n = 48;
    List<Task> tasks = leased("batched", n);
    Completions completions = new Completions(transport, "batched");
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<CompletionOutcome>> answers = new ArrayList<>();
      for (Task t : tasks) {
        answers.add(
            pool.submit(
                () -> {
                  go.await();
                  return completions.complete(inline(t, "s"));
                }));
      }
      go.countDown();
      for (int i = 0; i < n; i++) {
        CompletionOutcome a = answers.get(i).get();
        assertThat(a.outcome()).isEqualTo("ok");
        assertThat(a.messageId())
            .as("the answer is for this thread's run")
            .isEqualTo(tasks.get(i).messageId());
      }
    } finally {
      pool.shutdownNow();
      completions.close();
    }
    for (Task t : tasks) {
      List<StepInfo> steps = client.runs().steps("batched", t.runId());
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
      Future<CompletionOutcome> good =
          pool.submit(() -> completions.complete(inline(tasks.get(0), "fine")));
      Future<CompletionOutcome> bad =
          pool.submit(() -> completions.complete(inline(tasks.get(1), "bad name!")));
      assertThat(good.get().outcome()).isEqualTo("ok");
      assertThatThrownBy(bad::get)
          .hasCauseInstanceOf(ApiException.class)
          .cause()
          .hasMessageContaining("step");
    } finally {
      pool.shutdownNow();
      completions.close();
    }
    assertThat(client.runs().steps("mixed", tasks.get(1).runId())).isEmpty();
  }

  private static Completion finish(Task t) {
    return new Completion(
        t.runId(),
        t.messageId(),
        t.receipt(),
        null,
        null,
        new RunResult("completed", LongNode.valueOf(t.runId()), null),
        60,
        null,
        null);
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
    List<dev.pgworkflows.workflows.internal.replay.Task> handed = new ArrayList<>();
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
      assertThat(completions.complete(finish(tasks.get(0)), true).outcome()).isEqualTo("ok");
      assertThat(handed).as("closed: nothing taken").isEmpty();
      open.set(true);
      assertThat(completions.complete(inline(tasks.get(1), "one"), false).outcome())
          .isEqualTo("ok");
      assertThat(handed).as("no slot freed: nothing taken").isEmpty();
      assertThat(completions.complete(finish(tasks.get(2)), true).outcome()).isEqualTo("ok");
      assertThat(handed).hasSize(1);
      dev.pgworkflows.workflows.internal.replay.Task n = handed.get(0);
      Task next =
          new Task(
              n.runId(),
              n.messageId(),
              n.receipt(),
              n.attempt(),
              n.version(),
              n.reason(),
              null,
              null,
              n.startedAt(),
              n.traceContext());
      assertThat(next.runId()).isEqualTo(due);
      assertThat(completions.complete(inline(next, "first"), false).outcome())
          .as("the handed task's lease is held")
          .isEqualTo("ok");
    } finally {
      completions.close();
    }
    assertThat(client.runs().steps("handed", due))
        .extracting(StepInfo::name)
        .containsExactly("first");
  }

  @Test
  void nothingIsSentOnceClosed() {
    List<Task> tasks = leased("closed", 1);
    Completions completions = new Completions(transport, "closed");
    completions.close();
    assertThatThrownBy(() -> completions.complete(inline(tasks.get(0), "s")))
        .isInstanceOf(ServerUnavailableException.class);
    assertThat(client.runs().steps("closed", tasks.get(0).runId())).isEmpty();
  }
}
