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
 * Worker labels and routing over HTTP: a workflow's required labels keep its tasks from workers
 * without them, a worker hands a task to the workers with a step's labels, {@code GET /v1/workers}
 * lists labels, and bad labels are answered 400 naming the field or header, changing nothing. Every
 * exchange checked against openapi.yaml.
 */
class WorkerRoutingRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static void assertBadField(Api.Response r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().get("field").asText()).isEqualTo(field);
  }

  private static Api.Response poll(String workflow, String id, String labels) {
    Map<String, String> headers =
        labels == null
            ? Map.of("X-Worker-Id", id)
            : Map.of("X-Worker-Id", id, "X-Worker-Labels", labels);
    return api.send(
        "POST",
        "/v1/workflows/" + workflow + "/tasks/poll",
        Map.of("versions", List.of(1), "max", 10, "waitSeconds", 0),
        headers);
  }

  @Test
  void aWorkflowsRequiredLabelsKeepItsTasksFromWorkersWithoutThem() {
    Api.Response set =
        api.put(
            "/v1/workflows/render/routing",
            Map.of("require", Map.of("gpu", "true"), "prefer", Map.of("region", "eu")));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(set.json().get("require").get("gpu").asText()).isEqualTo("true");
    assertThat(api.get("/v1/workflows/render/routing").json().get("sticky").asBoolean()).isFalse();

    long run = new WorkerClient(api, "render").start(Map.of("frame", 1));
    assertThat(poll("render", "cpu-1", null).json().get("tasks")).isEmpty();
    assertThat(poll("render", "cpu-1", "gpu=false").json().get("tasks")).isEmpty();
    JsonNode blockers =
        api.get("/v1/workflows/render/runs/" + run + "/blockers").json().get("blockers");
    assertThat(blockers.get(0).get("kind").asText()).isEqualTo("no_worker_with_labels");
    assertThat(blockers.get(0).get("labels").get("gpu").asText()).isEqualTo("true");

    JsonNode tasks = poll("render", "gpu-1", "gpu=true,region=us").json().get("tasks");
    assertThat(tasks).hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(run);
    JsonNode listed = api.get("/v1/workers?workflow=render").json().get("workers");
    assertThat(listed)
        .anySatisfy(w -> assertThat(w.get("labels").get("gpu").asText()).isEqualTo("true"));
    assertThat(listed)
        .anySatisfy(
            w -> {
              // As its last poll declared them.
              assertThat(w.get("id").asText()).isEqualTo("cpu-1");
              assertThat(w.get("labels")).isEqualTo(Api.JSON.valueToTree(Map.of("gpu", "false")));
            });
  }

  @Test
  void aWorkerHandsATaskToTheWorkersWithItsStepsLabels() {
    WorkerClient worker = new WorkerClient(api, "train");
    long run = worker.start(1);
    JsonNode task = poll("train", "cpu-2", null).json().get("tasks").get(0);
    Api.Response routed =
        api.post(
            "/v1/workflows/train/runs/" + run + "/route",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "labels", Map.of("gpu", "a100")));
    assertThat(routed.status()).as(routed.body()).isEqualTo(200);
    assertThat(routed.json().get("outcome").asText()).isEqualTo("routed");
    assertThat(poll("train", "cpu-2", null).json().get("tasks")).isEmpty();
    JsonNode again = poll("train", "gpu-2", "gpu=a100").json().get("tasks");
    assertThat(again).hasSize(1);
    assertThat(again.get(0).get("attempt").asInt()).isEqualTo(1);
  }

  @Test
  void badLabelsAreRefusedNamingTheFieldAndChangeNothing() {
    api.put("/v1/workflows/kept-routing/routing", Map.of("sticky", true));
    assertBadField(
        api.put("/v1/workflows/kept-routing/routing", Map.of("require", Map.of("GPU", "x"))),
        "require");
    assertBadField(
        api.put("/v1/workflows/kept-routing/routing", Map.of("prefer", Map.of("gpu", "a b"))),
        "prefer.gpu");
    assertBadField(
        api.put("/v1/workflows/kept-routing/routing", Map.of("require", Map.of())), "require");
    JsonNode kept = api.get("/v1/workflows/kept-routing/routing").json();
    assertThat(kept.get("sticky").asBoolean()).isTrue();
    assertThat(kept.get("require").isNull()).isTrue();

    Api.Response header = poll("kept-routing", "w-1", "gpu");
    assertBadField(header, "X-Worker-Labels");
    assertThat(header.json().get("detail").asText()).contains("name=value");
    assertBadField(poll("kept-routing", "w-1", "gpu=true,gpu=false"), "X-Worker-Labels");
    assertThat(api.get("/v1/workers?workflow=kept-routing").json().get("workers")).isEmpty();

    long run = new WorkerClient(api, "kept-routing").start(1);
    JsonNode task = poll("kept-routing", "w-1", null).json().get("tasks").get(0);
    assertBadField(
        api.post(
            "/v1/workflows/kept-routing/runs/" + run + "/route",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "labels", Map.of("gpu", ""))),
        "labels.gpu");
  }
}
