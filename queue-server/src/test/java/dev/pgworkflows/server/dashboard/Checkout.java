package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A checkout run taken through the worker protocol by hand, step by step as a worker would: a step,
 * a step that needed a second attempt, a child run, a short sleep, then a wait for the payment; a
 * note sent meanwhile stays buffered. {@link #finish} ends it once the payment came.
 */
final class Checkout {
  static final String CHILD_WORKFLOW = "notify-customer";

  private final ServerOnFreshDatabase server;
  private final String workflow;
  private final WorkerClient worker;
  private final long runId;

  private Checkout(ServerOnFreshDatabase server, String workflow, long runId) {
    this.server = server;
    this.workflow = workflow;
    this.worker = server.worker(workflow);
    this.runId = runId;
  }

  long runId() {
    return runId;
  }

  String path() {
    return "/v1/workflows/" + workflow + "/runs/" + runId;
  }

  /** A run of {@code workflow} that waits for event {@code payment.confirmed} of order 7. */
  static Checkout waitingForPayment(ServerOnFreshDatabase server, String workflow)
      throws InterruptedException {
    Api api = server.api();
    WorkerClient worker = server.worker(workflow);
    Checkout c =
        new Checkout(server, workflow, worker.start(Map.of("orderId", 7, "customer", "ada")));

    JsonNode task = worker.pollOne();
    task = c.inline(task, step("reserve-stock", "run", Map.of("reserved", 3), 180));

    Api.Response retry =
        api.post(
            c.path() + "/retry",
            Map.of(
                "messageId",
                task.get("messageId").asLong(),
                "receipt",
                task.get("receipt").asText(),
                "delayMs",
                0,
                "step",
                "charge-card"));
    assertThat(retry.status()).as(retry.body()).isEqualTo(200);
    task = worker.pollOne();
    assertThat(task.get("attempt").asInt()).isEqualTo(2);
    task = c.inline(task, step("charge-card", "run", Map.of("charged", 42.5), 320));

    Api.Response child =
        api.post(
            c.path() + "/children",
            Map.of("step", "notify", "workflow", CHILD_WORKFLOW, "input", Map.of("orderId", 7)));
    assertThat(child.status()).as(child.body()).isEqualTo(200);
    task =
        c.inline(
            task,
            step(
                "notify",
                "child",
                Map.of("runId", child.json().get("runId").asLong(), "workflow", CHILD_WORKFLOW),
                20));

    Instant until = Instant.now().plusMillis(400);
    Api.Response sleep =
        worker.complete(
            task,
            Map.of(
                "step",
                step("cool-off", "sleep", Map.of("until", until.toString()), 0),
                "next",
                Map.of("delayMs", 400, "until", until.toString())));
    assertThat(sleep.json().get("outcome").asText()).as(sleep.body()).isEqualTo("ok");
    task = worker.pollOne();

    Api.Response note =
        api.post(c.path() + "/signals/gift-note", Map.of("text", "Happy birthday, Ada"));
    assertThat(note.json().get("outcome").asText()).isEqualTo("buffered");

    Api.Response wait =
        worker.complete(
            task,
            Map.of(
                "next",
                Map.of(
                    "delayMs",
                    600_000,
                    "wait",
                    Map.of(
                        "step",
                        "confirm",
                        "event",
                        "payment.confirmed",
                        "match",
                        Map.of("orderId", 7)))));
    assertThat(wait.json().get("outcome").asText()).as(wait.body()).isEqualTo("ok");
    return c;
  }

  /** After the payment was delivered: the run ships and completes. */
  void finish() throws InterruptedException {
    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(runId);
    Api.Response end =
        worker.complete(
            task,
            Map.of(
                "step",
                step("ship", "run", Map.of("tracking", "PG-7-0001"), 260),
                "result",
                Map.of(
                    "status",
                    "completed",
                    "output",
                    Map.of("shipped", true, "tracking", "PG-7-0001"))));
    assertThat(end.json().get("outcome").asText()).as(end.body()).isEqualTo("ok");
  }

  /** Journals {@code step} and goes on inline; answers the task with the receipt to use next. */
  private JsonNode inline(JsonNode task, Map<String, Object> step) {
    Api.Response r = worker.complete(task, Map.of("step", step, "next", Map.of("inline", true)));
    assertThat(r.json().get("outcome").asText()).as(r.body()).isEqualTo("ok");
    ObjectNode next = task.deepCopy();
    next.put("receipt", r.json().get("receipt").asText());
    return next;
  }

  /** A step record of a step that takes {@code tookMs}, from now (it waits them out). */
  private static Map<String, Object> step(String name, String kind, Object output, long tookMs)
      throws InterruptedException {
    Thread.sleep(tookMs);
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("name", name);
    s.put("kind", kind);
    s.put("output", output);
    s.put("startedAt", Instant.now().minusMillis(tookMs).toString());
    return s;
  }

  JsonNode run() {
    return server.api().get(path()).json();
  }
}
