package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What {@code pgw journals export --workflow NAME --out DIR} writes, made from the same routes (the
 * command itself lives in the cli module, which this one does not depend on).
 */
final class Exports {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Exports() {}

  static void write(WorkflowTestKit kit, String workflow, Path dir) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    String base = kit.url() + "/v1/workflows/" + workflow + "/runs";
    for (JsonNode listed : get(http, kit, base + "?status=running&limit=1000").get("runs")) {
      long runId = listed.get("runId").asLong();
      JsonNode run = get(http, kit, base + "/" + runId);
      ObjectNode file = JSON.createObjectNode();
      file.put("workflow", workflow);
      file.put("runId", runId);
      file.set("version", run.get("version"));
      file.set("status", run.get("status"));
      file.set("input", run.get("input"));
      if (run.hasNonNull("waitingFor")) {
        file.set("waitingFor", run.get("waitingFor"));
      }
      file.set("steps", get(http, kit, base + "/" + runId + "/steps").get("steps"));
      Files.writeString(dir.resolve(workflow + "-" + runId + ".json"), file.toPrettyString());
    }
  }

  private static JsonNode get(HttpClient http, WorkflowTestKit kit, String url) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + kit.token(WorkflowTestKit.Role.CLIENT))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }
}
