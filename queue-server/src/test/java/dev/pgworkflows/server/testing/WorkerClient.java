package dev.pgworkflows.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.Api;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The worker protocol over real HTTP for one workflow, as a test drives it by hand: start runs,
 * poll for tasks, complete, retry and extend leases. Tasks stay JSON, so tests assert on what the
 * server wrote; every exchange is checked against openapi.yaml by {@link Api}.
 */
public final class WorkerClient {
  /**
   * The lease this client's completions state ({@code leaseSeconds}, which an inline continuation
   * must give) unless a test gives its own: the server's default for polls, which this client's
   * polls take.
   */
  public static final int LEASE_SECONDS = 60;

  private final Api api;
  private final String workflow;

  public WorkerClient(Api api, String workflow) {
    this.api = api;
    this.workflow = workflow;
  }

  public String workflow() {
    return workflow;
  }

  private String path(String rest) {
    return "/v1/workflows/" + workflow + rest;
  }

  // ---- runs

  /** Starts a run with {@code input}; asserts it was created and returns its id. */
  public long start(Object input) {
    return created(startWith(Map.of("input", input)));
  }

  /** Starts a run with this body, as it is. */
  public Api.Response startWith(Map<String, Object> body) {
    return api.post(path("/runs"), body);
  }

  /** The id of the run a start created; asserts it was created. */
  public static long created(Api.Response r) {
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.json().get("runId").asLong();
  }

  /** The run as {@code GET .../runs/{runId}} shows it. */
  public JsonNode run(long runId) {
    return api.get(path("/runs/" + runId)).json();
  }

  /** The names of the run's journaled steps, in order. */
  public List<String> journal(long runId) {
    return api.get(path("/runs/" + runId + "/steps")).json().get("steps").findValuesAsText("name");
  }

  // ---- polls

  /** A poll with this body, as it is. */
  public Api.Response poll(Map<String, Object> body) {
    return api.post(path("/tasks/poll"), body);
  }

  /** A poll for up to {@code max} tasks of these versions, waiting up to {@code waitSeconds}. */
  public Api.Response poll(List<Integer> versions, int max, int waitSeconds) {
    return poll(Map.of("versions", versions, "max", max, "waitSeconds", waitSeconds));
  }

  /** Polls version 1 for one task, waiting up to 5 s; asserts it got exactly one. */
  public JsonNode pollOne() {
    Api.Response r = poll(Map.of("versions", List.of(1), "waitSeconds", 5));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("tasks")).hasSize(1);
    return r.json().get("tasks").get(0);
  }

  /** Polls version 1 until {@code n} tasks are held; returns them by run id. */
  public Map<Long, JsonNode> pollUntil(int n) {
    Map<Long, JsonNode> byRun = new HashMap<>();
    while (byRun.size() < n) {
      Api.Response r = poll(List.of(1), n - byRun.size(), 5);
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      assertThat(r.json().get("tasks")).as("tasks due").isNotEmpty();
      for (JsonNode t : r.json().get("tasks")) {
        byRun.put(t.get("runId").asLong(), t);
      }
    }
    return byRun;
  }

  /**
   * A poll sent on another thread, returned once the server counts a poll waiting (any poll of the
   * server: call it with no other poll waiting).
   */
  public CompletableFuture<Api.Response> waitingPoll(
      List<Integer> versions, int max, int waitSeconds) {
    CompletableFuture<Api.Response> poll =
        CompletableFuture.supplyAsync(() -> poll(versions, max, waitSeconds));
    api.awaitWaitingPolls(1);
    return poll;
  }

  // ---- completions

  /**
   * Completes {@code task} on the single-run route, with these fields besides its lease (and {@code
   * leaseSeconds} {@value #LEASE_SECONDS} unless given).
   */
  public Api.Response complete(JsonNode task, Map<String, Object> fields) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("messageId", task.get("messageId").asLong());
    body.put("receipt", task.get("receipt").asText());
    body.put("leaseSeconds", LEASE_SECONDS);
    body.putAll(fields);
    return api.post(path("/runs/" + task.get("runId").asLong() + "/complete"), body);
  }

  /**
   * A completion of {@code task} for a batch, with these fields ({@code name, value, ...}; {@code
   * leaseSeconds} {@value #LEASE_SECONDS} unless given).
   */
  public static Map<String, Object> item(JsonNode task, Object... fields) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("runId", task.get("runId").asLong());
    m.put("messageId", task.get("messageId").asLong());
    m.put("receipt", task.get("receipt").asText());
    m.put("leaseSeconds", LEASE_SECONDS);
    for (int i = 0; i < fields.length; i += 2) {
      m.put((String) fields[i], fields[i + 1]);
    }
    return m;
  }

  /** A {@code run} step with this output. */
  public static Map<String, Object> step(String name, Object output) {
    return Map.of("name", name, "kind", "run", "output", output);
  }

  /** Completes a batch of {@link #item items}. */
  public Api.Response completeBatch(List<?> items) {
    return api.post(path("/tasks/complete"), Map.of("completions", items));
  }

  /** Completes a batch of {@link #item items}, taking tasks on these terms with the answer. */
  public Api.Response completeBatch(List<?> items, Map<String, Object> take) {
    return api.post(path("/tasks/complete"), Map.of("completions", items, "take", take));
  }

  // ---- retry and lease

  /** Hands {@code task} back to be due again after {@code delayMs}. */
  public Api.Response retry(JsonNode task, long delayMs) {
    return api.post(
        path("/runs/" + task.get("runId").asLong() + "/retry"),
        Map.of(
            "messageId", task.get("messageId").asLong(),
            "receipt", task.get("receipt").asText(),
            "delayMs", delayMs));
  }

  /** Extends the lease on {@code task} to {@code leaseSeconds} from now. */
  public Api.Response lease(JsonNode task, int leaseSeconds) {
    return api.post(
        path("/runs/" + task.get("runId").asLong() + "/lease"),
        Map.of(
            "messageId", task.get("messageId").asLong(),
            "receipt", task.get("receipt").asText(),
            "leaseSeconds", leaseSeconds));
  }

  // ---- updates

  /**
   * Takes the pending updates of {@code task} (a task of reason {@code update}) and answers the
   * first with {@code answer} (its {@code updateId} added); the answer route's response. The task
   * must hold exactly one update.
   */
  public Api.Response answerUpdate(JsonNode task, Map<String, Object> answer) {
    assertThat(task.get("reason").asText()).isEqualTo("update");
    Map<String, Object> lease =
        Map.of(
            "messageId", task.get("messageId").asLong(), "receipt", task.get("receipt").asText());
    String run = path("/runs/" + task.get("runId").asLong());
    Api.Response taken = api.post(run + "/update-task", lease);
    assertThat(taken.status()).as(taken.body()).isEqualTo(200);
    JsonNode pending = taken.json().get("updates");
    assertThat(pending).hasSize(1);
    Map<String, Object> a = new LinkedHashMap<>(answer);
    a.put("updateId", pending.get(0).get("updateId").asLong());
    Map<String, Object> body = new LinkedHashMap<>(lease);
    body.put("answers", List.of(a));
    return api.post(run + "/update-answers", body);
  }
}
