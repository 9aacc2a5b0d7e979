package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The /v1/workflows routes and the worker protocol, driven over HTTP as a worker would. */
class WorkflowApiTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  @Test
  void aRunGoesFromStartThroughInlineStepsToCompletion() {
    long run = server.worker("flow").start(Map.of("n", 1));
    JsonNode task = server.worker("flow").pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(run);
    assertThat(task.get("reason").asText()).isEqualTo("start");
    assertThat(task.get("attempt").asInt()).isEqualTo(1);
    assertThat(task.get("input").get("n").asInt()).isEqualTo(1);
    assertThat(task.get("journal")).isEmpty();

    Api.Response first =
        server
            .worker("flow")
            .complete(
                task,
                Map.of(
                    "step",
                    Map.of("name", "a", "kind", "run", "output", 1),
                    "next",
                    Map.of("inline", true)));
    assertThat(first.json().get("outcome").asText()).isEqualTo("ok");
    // The lease is fresh: kept as it is, under the same receipt.
    String receipt = first.json().get("receipt").asText();
    assertThat(receipt).isEqualTo(task.get("receipt").asText());

    // The worker's retry of a completion that went through changes nothing.
    Api.Response again =
        server
            .worker("flow")
            .complete(
                task,
                Map.of(
                    "step",
                    Map.of("name", "a", "kind", "run", "output", 1),
                    "next",
                    Map.of("inline", true)));
    assertThat(again.json().get("outcome").asText()).isEqualTo("duplicate");

    // A receipt that does not hold the lease changes nothing either.
    ObjectNode other = task.deepCopy();
    other.put("receipt", Long.toString(Long.parseLong(receipt) + 1));
    Api.Response stale =
        server
            .worker("flow")
            .complete(
                other,
                Map.of(
                    "step",
                    Map.of("name", "b", "kind", "run", "output", 2),
                    "next",
                    Map.of("inline", true)));
    assertThat(stale.json().get("outcome").asText()).isEqualTo("stale");

    Map<String, Object> done = new java.util.LinkedHashMap<>();
    done.put("messageId", task.get("messageId").asLong());
    done.put("receipt", receipt);
    done.put("step", Map.of("name", "b", "kind", "run", "output", 2));
    done.put("result", Map.of("status", "completed", "output", "all done"));
    Api.Response fin = api.post("/v1/workflows/flow/runs/" + run + "/complete", done);
    assertThat(fin.json().get("outcome").asText()).isEqualTo("ok");

    JsonNode got = api.get("/v1/workflows/flow/runs/" + run).json();
    assertThat(got.get("status").asText()).isEqualTo("completed");
    assertThat(got.get("output").asText()).isEqualTo("all done");
    assertThat(got.has("completedAt")).isTrue();
    JsonNode steps = api.get("/v1/workflows/flow/runs/" + run + "/steps").json().get("steps");
    assertThat(steps.findValuesAsText("name")).containsExactly("a", "b");
    assertThat(steps.get(0).has("startedAt")).isTrue();
    assertThat(steps.get(0).has("completedAt")).isTrue();

    JsonNode index = api.get("/v1/workflows").json().get("workflows");
    assertThat(index.findValuesAsText("name")).contains("flow");
  }

  @Test
  void idempotentStartUnderFiftyRacingStarts() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Callable<Api.Response>> calls = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        calls.add(
            () ->
                api.post(
                    "/v1/workflows/idem/runs",
                    Map.of("input", Map.of(), "idempotencyKey", "once")));
      }
      Set<Long> ids = new HashSet<>();
      int created = 0;
      for (Future<Api.Response> f : pool.invokeAll(calls)) {
        JsonNode j = f.get().json();
        ids.add(j.get("runId").asLong());
        created += j.get("created").asBoolean() ? 1 : 0;
      }
      assertThat(ids).hasSize(1);
      assertThat(created).isEqualTo(1);
      JsonNode q = api.get("/v1/queues/__wf_idem").json();
      assertThat(q.get("metrics").get("depth").asLong()).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void signalsAreDeliveredOnlyToAMatchingWaitAndOnlyOnce() throws Exception {
    long run = server.worker("sig").start(Map.of());
    Api.Response early =
        api.post("/v1/workflows/sig/runs/" + run + "/signals/approve", Map.of("ok", true));
    assertThat(early.json().get("delivered").asBoolean()).isFalse();
    assertThat(early.json().get("outcome").asText()).isEqualTo("buffered");

    JsonNode task = server.worker("sig").pollOne();
    server
        .worker("sig")
        .complete(
            task,
            Map.of(
                "next",
                Map.of(
                    "delayMs",
                    600_000,
                    "wait",
                    Map.of("step", "approve", "event", "approve", "match", Map.of("team", "a")))));
    assertThat(
            api.get("/v1/workflows/sig/runs/" + run).json().get("waitingFor").get("event").asText())
        .isEqualTo("approve");

    // Neither the early signal nor this one contains the wait's match: both stay buffered.
    Api.Response wrong =
        api.post("/v1/workflows/sig/runs/" + run + "/signals/approve", Map.of("team", "b"));
    assertThat(wrong.json().get("outcome").asText()).isEqualTo("buffered");
    assertThat(api.post("/v1/workflows/sig/runs/999999/signals/approve", Map.of()).status())
        .isEqualTo(404);

    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Callable<Api.Response>> calls = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        calls.add(
            () ->
                api.post(
                    "/v1/workflows/sig/runs/" + run + "/signals/approve",
                    Map.of("team", "a", "by", "x")));
      }
      int delivered = 0;
      for (Future<Api.Response> f : pool.invokeAll(calls)) {
        delivered += f.get().json().get("delivered").asBoolean() ? 1 : 0;
      }
      assertThat(delivered).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
    JsonNode resumed = server.worker("sig").pollOne();
    assertThat(resumed.get("reason").asText()).isEqualTo("signal");
    assertThat(resumed.get("journal").get(0).get("output").get("by").asText()).isEqualTo("x");
  }

  @Test
  void aWaitTimesOutIntoATimeoutResult() throws Exception {
    long run = server.worker("tmo").start(Map.of());
    JsonNode task = server.worker("tmo").pollOne();
    server
        .worker("tmo")
        .complete(
            task,
            Map.of("next", Map.of("delayMs", 200, "wait", Map.of("step", "w", "event", "w"))));
    JsonNode resumed = server.worker("tmo").pollOne();
    assertThat(resumed.get("reason").asText()).isEqualTo("timeout");
    assertThat(resumed.get("journal").get(0).get("timedOut").asBoolean()).isTrue();
    // The wait is over: a late signal is only kept for a later wait.
    assertThat(
            api.post("/v1/workflows/tmo/runs/" + run + "/signals/w", Map.of())
                .json()
                .get("outcome")
                .asText())
        .isEqualTo("buffered");
  }

  @Test
  void cancelDuringAStepLeavesTheRunCancelledAndTheLateCompletionOnlyAcks() {
    long run = server.worker("cnl").start(Map.of());
    JsonNode task = server.worker("cnl").pollOne();
    Api.Response cancel = api.delete("/v1/workflows/cnl/runs/" + run);
    assertThat(cancel.json().get("cancelled").asBoolean()).isTrue();
    Api.Response late =
        server
            .worker("cnl")
            .complete(
                task,
                Map.of(
                    "step",
                    Map.of("name", "s", "kind", "run", "output", 1),
                    "result",
                    Map.of("status", "completed")));
    assertThat(late.json().get("outcome").asText()).isEqualTo("not_running");
    JsonNode got = api.get("/v1/workflows/cnl/runs/" + run).json();
    assertThat(got.get("status").asText()).isEqualTo("cancelled");
    assertThat(api.get("/v1/workflows/cnl/runs/" + run + "/steps").json().get("steps")).isEmpty();
    assertThat(api.get("/v1/queues/__wf_cnl").json().get("metrics").get("depth").asLong()).isZero();
    assertThat(api.delete("/v1/workflows/cnl/runs/" + run).json().get("cancelled").asBoolean())
        .isFalse();
  }

  @Test
  void anInlineCompletionAfterACancelOnlyAcksToo() {
    long run = server.worker("cni").start(Map.of());
    JsonNode task = server.worker("cni").pollOne();
    assertThat(api.delete("/v1/workflows/cni/runs/" + run).json().get("cancelled").asBoolean())
        .isTrue();
    Api.Response late =
        server
            .worker("cni")
            .complete(
                task,
                Map.of(
                    "step",
                    Map.of("name", "s", "kind", "run", "output", 1),
                    "next",
                    Map.of("inline", true)));
    assertThat(late.json().get("outcome").asText()).isEqualTo("not_running");
    assertThat(api.get("/v1/workflows/cni/runs/" + run).json().get("status").asText())
        .isEqualTo("cancelled");
    assertThat(api.get("/v1/workflows/cni/runs/" + run + "/steps").json().get("steps")).isEmpty();
    assertThat(api.get("/v1/queues/__wf_cni").json().get("metrics").get("depth").asLong()).isZero();
  }

  @Test
  void retryLaterHidesTheTaskAndCountsTheAttempt() {
    long run = server.worker("rty").start(Map.of());
    JsonNode task = server.worker("rty").pollOne();
    Api.Response r =
        api.post(
            "/v1/workflows/rty/runs/" + run + "/retry",
            Map.of(
                "messageId",
                task.get("messageId").asLong(),
                "receipt",
                task.get("receipt").asText(),
                "delayMs",
                100));
    assertThat(r.json().get("outcome").asText()).isEqualTo("ok");
    JsonNode again = server.worker("rty").pollOne();
    assertThat(again.get("attempt").asInt()).isEqualTo(2);
    Api.Response lease =
        api.post(
            "/v1/workflows/rty/runs/" + run + "/lease",
            Map.of(
                "messageId",
                again.get("messageId").asLong(),
                "receipt",
                again.get("receipt").asText(),
                "leaseSeconds",
                30));
    assertThat(lease.status()).isEqualTo(200);
    Api.Response lost =
        api.post(
            "/v1/workflows/rty/runs/" + run + "/lease",
            Map.of(
                "messageId",
                again.get("messageId").asLong(),
                "receipt",
                again.get("receipt").asText(),
                "leaseSeconds",
                30));
    assertThat(lost.status()).isEqualTo(409);
  }

  @Test
  void listFiltersByStatusTimeAndInputWithStablePagination() {
    for (int i = 0; i < 7; i++) {
      server.worker("lst").start(Map.of("customer", Map.of("id", i % 2), "n", i));
    }
    JsonNode filtered = api.get("/v1/workflows/lst/runs?input.customer.id=1").json().get("runs");
    assertThat(filtered).hasSize(3);
    assertThat(api.get("/v1/workflows/lst/runs?status=running&since=2000-01-01").json().get("runs"))
        .hasSize(7);
    assertThat(api.get("/v1/workflows/lst/runs?status=failed").json().get("runs")).isEmpty();
    assertThat(api.get("/v1/workflows/lst/runs?until=2000-01-01T00:00:00Z").json().get("runs"))
        .isEmpty();

    List<Long> seen = new ArrayList<>();
    Api.Response page = api.get("/v1/workflows/lst/runs?limit=3");
    while (true) {
      for (JsonNode r : page.json().get("runs")) {
        seen.add(r.get("runId").asLong());
      }
      server.worker("lst").start(Map.of("inserted", "while paging"));
      if (!page.json().has("nextCursor")) {
        break;
      }
      page =
          api.get(
              "/v1/workflows/lst/runs?limit=3&cursor=" + page.json().get("nextCursor").asText());
    }
    assertThat(seen)
        .hasSize(7)
        .doesNotHaveDuplicates()
        .isSortedAccordingTo((a, b) -> Long.compare(b, a));

    assertThat(api.get("/v1/workflows/lst/runs?status=bogus").status()).isEqualTo(400);
    assertThat(api.get("/v1/workflows/lst/runs?since=yesterday").status()).isEqualTo(400);
    assertThat(api.get("/v1/workflows/lst/runs?nonsense=1").status()).isEqualTo(400);
    assertThat(
            api.get("/v1/workflows/lst/runs?input.x%27%3B%20drop%20table%20x%3B--=1")
                .json()
                .get("runs"))
        .isEmpty();
  }

  @Test
  void aPublishToATopicStartsARun() {
    assertThat(
            api.post(
                    "/v1/topics/users.created/subscriptions",
                    Map.of("type", "workflow", "name", "welcome"))
                .status())
        .isEqualTo(201);
    Api.Response pub =
        api.send(
            "POST",
            "/v1/topics/users.created/messages",
            Map.of("body", Map.of("user", 5), "headers", Map.of("idempotencyKey", "user-5")),
            Map.of());
    assertThat(pub.status()).isEqualTo(201);
    api.post(
        "/v1/topics/users.created/messages",
        Map.of("body", Map.of("user", 5), "headers", Map.of("idempotencyKey", "user-5")));
    JsonNode runs = api.get("/v1/workflows/welcome/runs").json().get("runs");
    assertThat(runs).hasSize(1);
    assertThat(runs.get(0).get("input").get("user").asInt()).isEqualTo(5);
    assertThat(runs.get(0).get("idempotencyKey").asText()).isEqualTo("user-5");
  }

  @Test
  void badWorkflowInputIsRejected() {
    assertThat(api.post("/v1/workflows/Bad%20Name/runs", Map.of()).status()).isEqualTo(400);
    assertThat(api.post("/v1/workflows/" + "x".repeat(44) + "/runs", Map.of()).status())
        .isEqualTo(400);
    assertThat(api.post("/v1/workflows/ok/runs", Map.of("version", 0)).status()).isEqualTo(400);
    assertThat(api.post("/v1/workflows/ok/runs", Map.of("retentionDays", -1)).status())
        .isEqualTo(400);
    assertThat(api.post("/v1/workflows/ok/runs", Map.of("idempotencyKey", "")).status())
        .isEqualTo(400);
    assertThat(api.post("/v1/workflows/ok/tasks/poll", Map.of("versions", List.of())).status())
        .isEqualTo(400);
    assertThat(api.get("/v1/workflows/ok/runs/abc").status()).isEqualTo(400);
    assertThat(api.get("/v1/workflows/ok/runs/12345").status()).isEqualTo(404);
    assertThat(api.get("/v1/workflows").json().get("workflows").findValuesAsText("name"))
        .doesNotContain("ok");
  }

  @Test
  void retentionIsClampedToTheServerCeiling() {
    Api.Response r = api.post("/v1/workflows/keep/runs", Map.of("input", 1, "retentionDays", 5000));
    long run = r.json().get("runId").asLong();
    assertThat(api.get("/v1/workflows/keep/runs/" + run).json().get("retentionDays").asInt())
        .isEqualTo(365);
  }
}
