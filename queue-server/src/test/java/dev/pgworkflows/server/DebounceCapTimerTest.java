package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A debounced run pushed up to its cap (ten windows after its first start) is handed to a waiting
 * worker when the cap comes, by a timer of its own: the fallback wake-up is ten minutes here.
 */
class DebounceCapTimerTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000");

  @Test
  void aRunPushedToItsCapIsHandedOutWhenTheCapComes() throws Exception {
    WorkerClient worker = server.worker("capped");
    long window = 1000;
    // Starts 600 ms apart push the run to each start plus the window; the last one, 9.3 s after
    // the first, would push it to 10.3 s, past the cap at 10 s: the cap decides, and no start's
    // own window ends then.
    // The workflow's queue made, and a poll waiting on it before the first start.
    worker.start(Map.of());
    assertThat(worker.pollOne()).isNotNull();
    CompletableFuture<Api.Response> poll = worker.waitingPoll(List.of(1), 1, 20);
    long t0 = System.nanoTime();
    long run =
        WorkerClient.created(
            worker.startWith(Map.of("input", 0, "debounceKey", "k", "debounceMs", window)));
    List<Long> at = new ArrayList<>();
    for (int i = 1; i <= 14; i++) {
      at.add(i * 600L);
    }
    at.add(9_300L);
    int n = 0;
    for (long ms : at) {
      while (System.nanoTime() < t0 + ms * 1_000_000L) {
        Thread.sleep(1);
      }
      Api.Response folded =
          worker.startWith(Map.of("input", ++n, "debounceKey", "k", "debounceMs", window));
      assertThat(folded.json().get("runId").asLong()).as("start %d folds", n).isEqualTo(run);
    }
    JsonNode view = worker.run(run);
    Instant due = Instant.parse(view.get("dueAt").asText());
    Instant began = Instant.parse(view.get("startedAt").asText());
    assertThat(due)
        .as("capped ten windows after the first start, before the last start's window ends")
        .isBetween(began.plusMillis(10 * window - 100), began.plusMillis(10 * window + 100));

    Api.Response handed = poll.get();
    Instant got = Instant.now();
    JsonNode tasks = handed.json().get("tasks");
    assertThat(tasks).hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(run);
    assertThat(Duration.between(due, got))
        .as("handed out when the cap came")
        .isLessThan(Duration.ofMillis(150));
  }
}
