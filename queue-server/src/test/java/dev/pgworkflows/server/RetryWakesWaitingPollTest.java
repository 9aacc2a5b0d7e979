package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A task handed back with {@code retry} wakes a poll waiting on the same server when it is due
 * again: at once for no delay, after the delay otherwise, though a retry sends no NOTIFY and the
 * fallback poll here is slow.
 */
class RetryWakesWaitingPollTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000");

  private static final Api api = server.api();

  /** Hands {@code task} back with {@code delayMs} while a poll waits; returns its answer and ms. */
  private static long[] handBack(String wf, JsonNode task, long delayMs) throws Exception {
    WorkerClient worker = server.worker(wf);
    CompletableFuture<Api.Response> waiting = worker.waitingPoll(List.of(1), 1, 20);
    long sent = System.nanoTime();
    Api.Response r = worker.retry(task, delayMs);
    assertThat(r.json().get("outcome").asText()).isEqualTo("ok");
    JsonNode tasks = waiting.get().json().get("tasks");
    long ms = (System.nanoTime() - sent) / 1_000_000;
    assertThat(tasks).as("the waiting poll got the task back").hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(task.get("runId").asLong());
    return new long[] {tasks.get(0).get("attempt").asLong(), ms};
  }

  @Test
  void aHandedBackTaskWakesAWaitingPollWhenDue() throws Exception {
    api.post("/v1/workflows/back/runs", Map.of("input", 1));
    long[] now = handBack("back", server.worker("back").pollOne(), 0);
    assertThat(now[0]).isEqualTo(2);
    assertThat(now[1]).as("ms to the answer").isLessThan(5_000);

    Api.Response again =
        api.post("/v1/workflows/back/tasks/poll", Map.of("versions", List.of(1), "waitSeconds", 0));
    assertThat(again.json().get("tasks")).as("leased by the woken poll").isEmpty();
  }

  @Test
  void aDelayedHandBackWakesAWaitingPollAfterItsDelay() throws Exception {
    api.post("/v1/workflows/later/runs", Map.of("input", 1));
    long[] later = handBack("later", server.worker("later").pollOne(), 300);
    assertThat(later[0]).isEqualTo(2);
    assertThat(later[1]).as("ms to the answer").isBetween(250L, 5_000L);
  }
}
