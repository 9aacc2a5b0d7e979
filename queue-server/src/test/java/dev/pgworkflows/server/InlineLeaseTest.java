package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static dev.pgworkflows.server.testing.WorkerClient.step;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An inline continuation keeps the lease the worker states in {@code leaseSeconds}: one without it
 * is refused (the server does not know the lease the task was handed out with), and a renewed lease
 * is as long as stated, not a default.
 */
class InlineLeaseTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  @Test
  void anInlineContinuationWithoutItsLeaseIsRefusedAndJournalsNothing() {
    WorkerClient worker = server.worker("unstated");
    long lone = worker.start(1);
    long first = worker.start(2);
    long second = worker.start(3);
    Map<Long, JsonNode> t = worker.pollUntil(3);

    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", t.get(lone).get("messageId").asLong());
    body.put("receipt", t.get(lone).get("receipt").asText());
    body.put("step", step("a", 1));
    body.put("next", Map.of("inline", true));
    Api.Response refused =
        server.api().post("/v1/workflows/unstated/runs/" + lone + "/complete", body);
    assertThat(refused.status()).as(refused.body()).isEqualTo(400);
    assertThat(refused.json().get("field").asText()).isEqualTo("leaseSeconds");
    assertThat(worker.journal(lone)).isEmpty();

    Map<String, Object> unstated =
        item(t.get(first), "step", step("a", 1), "next", Map.of("inline", true));
    unstated.remove("leaseSeconds");
    Api.Response batch =
        worker.completeBatch(
            List.of(
                unstated,
                item(t.get(second), "step", step("a", 1), "next", Map.of("inline", true))));
    JsonNode results = batch.json().get("results");
    assertThat(results.get(0).get("outcome").asText()).as(batch.body()).isEqualTo("rejected");
    assertThat(results.get(0).get("status").asInt()).isEqualTo(400);
    assertThat(results.get(0).get("detail").asText()).contains("leaseSeconds");
    assertThat(results.get(1).get("outcome").asText()).isEqualTo("ok");
    assertThat(worker.journal(first)).isEmpty();
    assertThat(worker.journal(second)).containsExactly("a");
  }

  @Test
  void aRenewedLeaseLastsAsLongAsTheWorkerStated() throws Exception {
    WorkerClient worker = server.worker("stated");
    long run = worker.start(1);
    JsonNode task =
        worker
            .poll(Map.of("versions", List.of(1), "waitSeconds", 5, "leaseSeconds", 3))
            .json()
            .get("tasks")
            .get(0);
    // Less than two thirds of the 3 s are left: the continuation renews the lease.
    Thread.sleep(1_200);
    Api.Response a =
        worker.complete(
            task, Map.of("step", step("a", 1), "next", Map.of("inline", true), "leaseSeconds", 3));
    long renewedAt = System.nanoTime();
    assertThat(a.json().get("outcome").asText()).as(a.body()).isEqualTo("ok");
    assertThat(a.json().get("receipt").asText()).isNotEqualTo(task.get("receipt").asText());

    // Held for about 3 s from the renewal, then due again for another worker.
    assertThat(worker.poll(List.of(1), 1, 0).json().get("tasks")).isEmpty();
    JsonNode back = null;
    while (back == null) {
      JsonNode tasks = worker.poll(List.of(1), 1, 1).json().get("tasks");
      back = tasks.isEmpty() ? null : tasks.get(0);
      assertThat((System.nanoTime() - renewedAt) / 1e9).as("seconds held").isLessThan(15);
    }
    double held = (System.nanoTime() - renewedAt) / 1e9;
    assertThat(back.get("runId").asLong()).isEqualTo(run);
    assertThat(held).as("seconds held").isGreaterThan(2.5);
  }
}
