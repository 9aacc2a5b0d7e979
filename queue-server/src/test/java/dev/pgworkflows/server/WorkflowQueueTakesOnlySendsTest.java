package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A workflow's queue {@code __wf_<name>} belongs to the engine: through the queue API it takes
 * sends, each of which starts a run, and refuses everything else with a 409 that changes nothing.
 */
class WorkflowQueueTakesOnlySendsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  @Test
  void everyRouteThatWouldChangeOrTakeFromAWorkflowQueueAnswers409AndChangesNothing() {
    WorkerClient worker = new WorkerClient(api, "owned");
    long run = worker.start(Map.of("n", 1));
    String q = "/v1/queues/__wf_owned";
    JsonNode before = api.get(q).json();

    List<Api.Response> refused =
        List.of(
            api.put(q, Map.of("fifo", false)),
            api.put(q, null),
            api.delete(q),
            api.post(q + "/purge", null),
            api.post(q + "/messages/receive", Map.of("max", 1)),
            api.post(q + "/messages/delete", Map.of("ids", List.of(1))),
            api.delete(q + "/messages/1"),
            api.post(q + "/messages/1/visibility", Map.of("visibilityTimeoutSeconds", 0)),
            api.post(q + "/dead-letters/redrive", null));
    for (Api.Response r : refused) {
      assertThat(r.status()).as(r.body()).isEqualTo(409);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("detail").asText())
          .startsWith(
              "queue \"__wf_owned\" belongs to workflow \"owned\": it takes sends (each starts a"
                  + " run) but no ");
    }

    JsonNode after = api.get(q).json();
    assertThat(after.get("fifo")).isEqualTo(before.get("fifo"));
    assertThat(after.get("visibilityTimeoutSeconds"))
        .isEqualTo(before.get("visibilityTimeoutSeconds"));
    assertThat(after.get("metrics").get("depth").asLong()).isEqualTo(1);
    assertThat(after.get("metrics").get("visible").asLong()).isEqualTo(1);
    assertThat(worker.run(run).get("status").asText()).isEqualTo("running");
    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(run);
    assertThat(task.get("messageId").asLong()).as("the refused routes named it").isEqualTo(1);
    assertThat(task.get("attempt").asInt()).as("nobody received it before").isEqualTo(1);
  }

  @Test
  void aPutCannotCreateAWorkflowsQueueAheadOfTheEngine() {
    Api.Response put = api.put("/v1/queues/__wf_early", Map.of("fifo", false));
    assertThat(put.status()).isEqualTo(409);
    assertThat(api.get("/v1/queues/__wf_early").status()).isEqualTo(404);
  }

  @Test
  void aSendStartsARunWithTheBodyAsInputAndItsIdempotencyKeyStartsItOnce() {
    Map<String, Object> msg =
        Map.of("body", Map.of("email", "a@b.c"), "headers", Map.of("idempotencyKey", "a@b.c"));
    Api.Response sent = api.post("/v1/queues/__wf_signup/messages", msg);
    assertThat(sent.status()).as(sent.body()).isEqualTo(201);
    long run = sent.json().get("ids").get(0).asLong();
    Api.Response again = api.post("/v1/queues/__wf_signup/messages", msg);
    assertThat(again.json().get("ids").get(0).asLong()).isEqualTo(run);

    JsonNode view = new WorkerClient(api, "signup").run(run);
    assertThat(view.get("status").asText()).isEqualTo("running");
    assertThat(view.get("input").get("email").asText()).isEqualTo("a@b.c");
    assertThat(view.get("idempotencyKey").asText()).isEqualTo("a@b.c");
    assertThat(api.get("/v1/workflows/signup/runs").json().get("runs")).hasSize(1);
    assertThat(new WorkerClient(api, "signup").pollOne().get("runId").asLong()).isEqualTo(run);
  }

  @Test
  void aBatchSendStartsARunPerMessageAnsweringTheirIdsInOrder() {
    Api.Response sent =
        api.post(
            "/v1/queues/__wf_batched/messages",
            Map.of("messages", List.of(Map.of("body", 1), Map.of("body", 2))));
    assertThat(sent.status()).as(sent.body()).isEqualTo(201);
    WorkerClient worker = new WorkerClient(api, "batched");
    JsonNode ids = sent.json().get("ids");
    assertThat(worker.run(ids.get(0).asLong()).get("input").asInt()).isEqualTo(1);
    assertThat(worker.run(ids.get(1).asLong()).get("input").asInt()).isEqualTo(2);
  }

  @Test
  void aTopicFanOutToAWorkflowQueueStartsARun() {
    Api.Response sub =
        api.post(
            "/v1/topics/signup.*/subscriptions", Map.of("type", "queue", "name", "__wf_fanned"));
    assertThat(sub.status()).as(sub.body()).isEqualTo(201);
    Api.Response pub =
        api.post(
            "/v1/topics/signup.eu/messages",
            Map.of("body", Map.of("email", "x@y.z"), "headers", Map.of("idempotencyKey", "x")));
    assertThat(pub.status()).as(pub.body()).isEqualTo(201);
    long run = pub.json().get("deliveries").get(0).get("id").asLong();

    JsonNode view = new WorkerClient(api, "fanned").run(run);
    assertThat(view.get("status").asText()).isEqualTo("running");
    assertThat(view.get("input").get("email").asText()).isEqualTo("x@y.z");
  }

  @Test
  void aSendThatCannotBeAStartIsABadRequestAndStartsNothing() {
    Api.Response noName = api.post("/v1/queues/__wf_-x/messages", Map.of("body", 1));
    assertThat(noName.status()).isEqualTo(400);
    assertThat(noName.json().get("field").asText()).isEqualTo("queue");

    Api.Response delayed =
        api.post(
            "/v1/queues/__wf_later/messages",
            Map.of("messages", List.of(Map.of("body", 1), Map.of("body", 2, "delaySeconds", 5))));
    assertThat(delayed.status()).isEqualTo(400);
    assertThat(delayed.json().get("detail").asText()).contains("takes no delay");
    assertThat(api.get("/v1/workflows/later/runs").json().get("runs")).isEmpty();
  }
}
