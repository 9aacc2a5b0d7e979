package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A task's {@code attempt} is the attempt of the first step the worker has not journaled yet, and
 * each step counts its own: a retry counts, a journaled step starts the next one's count at 1, and
 * a worker that goes on inline learns that count from the completion's answer.
 */
class StepAttemptsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  @Test
  void anInlineContinuationAnswersTheAttemptOfTheNextStep() {
    WorkerClient worker = server.worker("tries");
    long flaky = worker.start(1);
    long other = worker.start(2);
    Map<Long, JsonNode> t = worker.pollUntil(2);
    assertThat(t.get(flaky).get("attempt").asInt()).isEqualTo(1);

    // Step "a" of the first run fails once and is retried: its second attempt.
    assertThat(worker.retry(t.get(flaky), 0).json().get("outcome").asText()).isEqualTo("ok");
    JsonNode again = worker.pollUntil(1).get(flaky);
    assertThat(again.get("attempt").asInt()).isEqualTo(2);

    // It succeeds and the run goes on inline: the next step is a first attempt.
    Api.Response a =
        worker.complete(again, Map.of("step", step("a", 1), "next", Map.of("inline", true)));
    assertThat(a.json().get("outcome").asText()).as(a.body()).isEqualTo("ok");
    assertThat(a.json().get("attempt").asInt()).isEqualTo(1);

    // So in a batch (two items: the batch function).
    Api.Response batch =
        worker.completeBatch(
            List.of(
                item(
                    again,
                    "receipt",
                    a.json().get("receipt").asText(),
                    "step",
                    step("b", 2),
                    "next",
                    Map.of("inline", true)),
                item(t.get(other), "step", step("a", 3), "next", Map.of("inline", true))));
    for (JsonNode r : batch.json().get("results")) {
      assertThat(r.get("outcome").asText()).as(batch.body()).isEqualTo("ok");
      assertThat(r.get("attempt").asInt()).isEqualTo(1);
    }

    // The journal keeps each step's own count.
    JsonNode steps = server.api().get("/v1/workflows/tries/runs/" + flaky + "/steps").json();
    assertThat(steps.get("steps").findValuesAsText("name")).containsExactly("a", "b");
    assertThat(steps.get("steps").get(0).get("attempts").asInt()).isEqualTo(2);
    assertThat(steps.get("steps").get(1).get("attempts").asInt()).isEqualTo(1);
  }

  @Test
  void aLeaseThatRunsOutAfterAnInlineStepIsTheNextStepsSecondAttempt() throws Exception {
    WorkerClient worker = server.worker("lapses");
    long run = worker.start(1);
    Api.Response polled =
        worker.poll(Map.of("versions", List.of(1), "waitSeconds", 5, "leaseSeconds", 1));
    JsonNode task = polled.json().get("tasks").get(0);
    Api.Response a =
        worker.complete(
            task, Map.of("step", step("a", 1), "next", Map.of("inline", true), "leaseSeconds", 1));
    assertThat(a.json().get("attempt").asInt()).as(a.body()).isEqualTo(1);

    // Step "b" never completes: the lease runs out and the task comes back for its second try.
    Thread.sleep(1_100);
    JsonNode back = worker.pollUntil(1).get(run);
    assertThat(back.get("attempt").asInt()).isEqualTo(2);
    assertThat(back.get("journal").findValuesAsText("name")).containsExactly("a");
    assertThat(back.get("journal").get(0).get("attempts").asInt()).isEqualTo(1);
  }
}
