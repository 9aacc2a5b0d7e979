package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A worker of one workflow driven by hand over the worker protocol, to give runs journals and
 * endings for the commands to show. It names itself {@code hand-1} on host {@code test-host}, with
 * the label {@code gpu=true}.
 */
final class HandWorker {
  private static final Map<String, String> WHO =
      Map.of(
          "X-Worker-Id",
          "hand-1",
          "X-Worker-Host",
          "test-host",
          "X-Worker-Slots",
          "4",
          "X-Worker-Labels",
          "gpu=true");

  private final Api api;
  private final String workflow;

  HandWorker(String url, String workflow) {
    this.api = new Api(url, TestServer.TOKEN);
    this.workflow = workflow;
  }

  private String path(Object... rest) {
    Object[] segments = new Object[3 + rest.length];
    segments[0] = "v1";
    segments[1] = "workflows";
    segments[2] = workflow;
    System.arraycopy(rest, 0, segments, 3, rest.length);
    return Api.path(segments);
  }

  /** Polls version 1 for one task, waiting up to 5 s. */
  JsonNode pollOne() {
    JsonNode tasks =
        api.send(
                "POST",
                path("tasks", "poll"),
                Json.MAPPER.valueToTree(Map.of("versions", List.of(1), "max", 1, "waitSeconds", 5)),
                WHO)
            .json()
            .get("tasks");
    assertThat(tasks).hasSize(1);
    return tasks.get(0);
  }

  /** Journals {@code run} steps of the task's run, each named with an output. */
  void journal(JsonNode task, String... steps) {
    List<Map<String, Object>> rows =
        java.util.Arrays.stream(steps)
            .map(s -> Map.<String, Object>of("name", s, "kind", "run", "output", s + "-done"))
            .toList();
    api.post(
        path("runs", task.get("runId").asLong(), "steps"),
        Json.MAPPER.valueToTree(
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "steps", rows)));
  }

  /** Hands the task's run back to wait in step {@code step} for {@code event}. */
  void waitFor(JsonNode task, String step, String event) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", task.get("messageId").asLong());
    body.put("receipt", task.get("receipt").asText());
    body.put("next", Map.of("wait", Map.of("step", step, "event", event)));
    api.post(path("runs", task.get("runId").asLong(), "complete"), Json.MAPPER.valueToTree(body));
  }

  /** Ends the task's run as failed. */
  void fail(JsonNode task) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", task.get("messageId").asLong());
    body.put("receipt", task.get("receipt").asText());
    body.put(
        "result",
        Map.of(
            "status", "failed", "error", Map.of("type", "Declined", "message", "card declined")));
    api.post(path("runs", task.get("runId").asLong(), "complete"), Json.MAPPER.valueToTree(body));
  }

  /** Hands the task back as a failed attempt of {@code step}, its next due after a minute. */
  void failAttempt(JsonNode task, String step) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", task.get("messageId").asLong());
    body.put("receipt", task.get("receipt").asText());
    body.put("delayMs", 60_000);
    body.put("step", step);
    body.put("error", Map.of("type", "Declined", "message", "card declined"));
    api.post(path("runs", task.get("runId").asLong(), "retry"), Json.MAPPER.valueToTree(body));
  }

  /** Journals one {@code run} step of the task's run that changes the run's state. */
  void journalWithState(JsonNode task, String step, Map<String, Object> state) {
    api.post(
        path("runs", task.get("runId").asLong(), "steps"),
        Json.MAPPER.valueToTree(
            Map.of(
                "messageId",
                task.get("messageId").asLong(),
                "receipt",
                task.get("receipt").asText(),
                "steps",
                List.of(
                    Map.of(
                        "name", step, "kind", "run", "output", step + "-done", "state", state)))));
  }

  /** Writes values to a stream of the task's run as the body's writes, and closes it. */
  void writeStream(JsonNode task, String stream, Object... values) {
    List<Map<String, Object>> entries = new java.util.ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      entries.add(Map.of("writer", "", "seq", i, "value", values[i]));
    }
    api.post(
        path("runs", task.get("runId").asLong(), "streams", stream),
        Json.MAPPER.valueToTree(Map.of("entries", entries, "close", true)));
  }

  /** Ends the task's run by continuing it as a new run of the workflow with {@code input}. */
  void continueAsNew(JsonNode task, Object input) {
    api.post(
        path("runs", task.get("runId").asLong(), "continue-as-new"),
        Json.MAPPER.valueToTree(
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "input", input)));
  }
}
