package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The times a journal row shows: a sleep runs from when the worker asked for it to when it ends,
 * and a step whose worker gave no start is recorded as starting no later than it completed, on
 * every completion path (inline, through a new message, ending the run, and in a batch).
 */
class JournalTimesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  /** Slack for the clock readings of the test and the database, which share the machine's clock. */
  private static final Duration SLACK = Duration.ofMillis(200);

  @Test
  void aSleepsRowRunsFromWhenItWasAskedForToWhenItEnds() {
    WorkerClient worker = server.worker("napper");
    long run = worker.start(1);
    JsonNode task = worker.pollUntil(1).get(run);

    Instant asked = Instant.now().truncatedTo(ChronoUnit.MICROS);
    Api.Response r =
        worker.complete(
            task,
            Map.of(
                "step",
                Map.of("name", "nap", "kind", "sleep", "startedAt", asked.toString()),
                "next",
                Map.of("delayMs", 1_500)));
    Instant sent = Instant.now();
    assertThat(r.json().get("outcome").asText()).as(r.body()).isEqualTo("ok");

    // The row is there while the run sleeps, and says when the sleep ends.
    JsonNode nap = steps(run).get(0);
    assertThat(nap.get("kind").asText()).isEqualTo("sleep");
    assertThat(instant(nap, "startedAt")).isEqualTo(asked);
    Instant ends = instant(nap, "completedAt");
    assertThat(ends)
        .isBetween(asked.plusMillis(1_500).minus(SLACK), sent.plusMillis(1_500).plus(SLACK));

    // The run comes back once it has ended, with the same row in its journal.
    JsonNode woke = worker.pollUntil(1).get(run);
    Instant wokeAt = Instant.now();
    assertThat(woke.get("reason").asText()).isEqualTo("resume");
    assertThat(wokeAt).isAfterOrEqualTo(ends.minus(SLACK));
    assertThat(instant(woke.get("journal").get(0), "completedAt")).isEqualTo(ends);
  }

  @Test
  void aStepWithoutAStartTimeStartsNoLaterThanItCompletes() {
    WorkerClient worker = server.worker("unstarted");
    long inline = worker.start(1);
    long ended = worker.start(2);
    long batchInline = worker.start(3);
    long batchEnded = worker.start(4);
    Map<Long, JsonNode> t = worker.pollUntil(4);

    // One completion at a time: inline, then through a new message; and one that ends its run.
    Api.Response first =
        worker.complete(
            t.get(inline), Map.of("step", step("a", 1), "next", Map.of("inline", true)));
    assertThat(first.json().get("outcome").asText()).as(first.body()).isEqualTo("ok");
    JsonNode held = t.get(inline).deepCopy();
    ((com.fasterxml.jackson.databind.node.ObjectNode) held)
        .put("receipt", first.json().get("receipt").asText());
    Api.Response second =
        worker.complete(
            held, Map.of("step", step("b", 2), "next", Map.of("reason", "resume", "delayMs", 0)));
    assertThat(second.json().get("outcome").asText()).as(second.body()).isEqualTo("ok");
    Api.Response end =
        worker.complete(
            t.get(ended),
            Map.of("step", step("c", 3), "result", Map.of("status", "completed", "output", 3)));
    assertThat(end.json().get("outcome").asText()).as(end.body()).isEqualTo("ok");

    // Two together: the batch function.
    Api.Response batch =
        worker.completeBatch(
            List.of(
                item(t.get(batchInline), "step", step("d", 4), "next", Map.of("inline", true)),
                item(
                    t.get(batchEnded),
                    "step",
                    step("e", 5),
                    "result",
                    Map.of("status", "completed", "output", 5))));
    assertThat(batch.json().get("results").findValuesAsText("outcome"))
        .as(batch.body())
        .containsExactly("ok", "ok");

    int rows = 0;
    for (long run : List.of(inline, ended, batchInline, batchEnded)) {
      for (JsonNode s : steps(run)) {
        assertThat(instant(s, "startedAt"))
            .as("step %s of run %d", s.get("name").asText(), run)
            .isBeforeOrEqualTo(instant(s, "completedAt"));
        rows++;
      }
    }
    assertThat(rows).isEqualTo(5);
  }

  private static JsonNode steps(long run) {
    return server.api().get("/v1/workflows/napper/runs/" + run + "/steps").json() == null
        ? null
        : stepsOf(run);
  }

  private static JsonNode stepsOf(long run) {
    for (String wf : List.of("napper", "unstarted")) {
      Api.Response r = server.api().get("/v1/workflows/" + wf + "/runs/" + run + "/steps");
      if (r.status() == 200) {
        return r.json().get("steps");
      }
    }
    throw new AssertionError("run " + run + " not found");
  }

  private static Instant instant(JsonNode node, String field) {
    return Instant.parse(node.get(field).asText());
  }
}
