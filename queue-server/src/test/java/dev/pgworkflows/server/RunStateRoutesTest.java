package dev.pgworkflows.server;

import static dev.pgworkflows.server.testing.WorkerClient.item;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A run's state is the fold of the changes journaled with its steps: readable whole and by key
 * while the run is in flight, a key waited for answers as soon as a step sets it, a restart reverts
 * what the rows it sets aside changed, and changes that break a limit are a 400 naming the field
 * that journals nothing. Every exchange is checked against openapi.yaml.
 */
class RunStateRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static Map<String, Object> step(String name, Map<String, Object> state) {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("name", name);
    s.put("kind", "run");
    s.put("output", 1);
    if (state != null) {
      s.put("state", state);
    }
    return s;
  }

  private static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static Map<String, Object> inline(Map<String, Object> step) {
    return map("step", step, "next", Map.of("inline", true));
  }

  private static JsonNode state(String workflow, long run) {
    Api.Response r = server.api().get("/v1/workflows/" + workflow + "/runs/" + run + "/state");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json();
  }

  private static Api.Response key(String workflow, long run, String key, String query) {
    return server.api().get("/v1/workflows/" + workflow + "/runs/" + run + "/state/" + key + query);
  }

  @Test
  void theStateIsTheFoldOfTheChangesJournaledWithTheSteps() {
    WorkerClient worker = server.worker("st-fold");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    assertThat(state("st-fold", run).get("state").size()).isZero();

    Api.Response a =
        worker.complete(task, inline(step("a", map("progress", 1, "phase", "loading"))));
    assertThat(a.json().get("outcome").asText()).as(a.body()).isEqualTo("ok");
    worker.complete(task, inline(step("plain", null)));
    Api.Response b =
        worker.complete(
            task, inline(step("b", map("progress", 2, "phase", null, "items", List.of(1, 2)))));
    assertThat(b.json().get("outcome").asText()).as(b.body()).isEqualTo("ok");

    JsonNode s = state("st-fold", run);
    assertThat(s.get("state").toString()).isEqualTo("{\"items\":[1,2],\"progress\":2}");
    long version = s.get("versions").get("progress").asLong();
    // Both keys were last set by b's row: one version.
    assertThat(s.get("versions").get("items").asLong()).isEqualTo(version);

    JsonNode progress = key("st-fold", run, "progress", "").json();
    assertThat(progress.get("set").asBoolean()).isTrue();
    assertThat(progress.get("value").asInt()).isEqualTo(2);
    assertThat(progress.get("version").asLong()).isEqualTo(version);
    assertThat(progress.get("running").asBoolean()).isTrue();
    // Removed, and never set: not set alike.
    assertThat(key("st-fold", run, "phase", "").json().get("set").asBoolean()).isFalse();
    assertThat(key("st-fold", run, "nothing", "").json().get("set").asBoolean()).isFalse();

    // The journal carries a row's changes only where it made some.
    JsonNode steps = server.api().get("/v1/workflows/st-fold/runs/" + run + "/steps").json();
    assertThat(steps.get("steps").get(0).get("state").get("phase").asText()).isEqualTo("loading");
    assertThat(steps.get("steps").get(1).has("state")).isFalse();
    assertThat(steps.get("steps").get(2).get("state").get("phase").isNull()).isTrue();

    // A task handed out again carries them too, for the worker's replay.
    worker.retry(task, 0);
    JsonNode again = worker.pollOne();
    assertThat(again.get("journal").get(0).get("state").get("progress").asInt()).isEqualTo(1);
    assertThat(again.get("journal").get(1).has("state")).isFalse();
  }

  @Test
  void aWaitForAKeyAnswersAsSoonAsAStepSetsIt() throws Exception {
    WorkerClient worker = server.worker("st-wait");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    long t0 = System.nanoTime();
    CompletableFuture<Api.Response> waiting =
        CompletableFuture.supplyAsync(() -> key("st-wait", run, "done", "?waitSeconds=20"));
    Thread.sleep(300);
    assertThat(waiting).isNotDone();
    worker.complete(task, inline(step("a", map("done", "yes"))));
    Api.Response r = waiting.get(10, TimeUnit.SECONDS);
    assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(10));
    assertThat(r.json().get("set").asBoolean()).as(r.body()).isTrue();
    assertThat(r.json().get("value").asText()).isEqualTo("yes");
    long version = r.json().get("version").asLong();

    // Past the version seen: the key's next change.
    CompletableFuture<Api.Response> next =
        CompletableFuture.supplyAsync(
            () -> key("st-wait", run, "done", "?waitSeconds=20&afterVersion=" + version));
    Thread.sleep(300);
    assertThat(next).isNotDone();
    worker.complete(task, inline(step("b", map("done", "again"))));
    Api.Response changed = next.get(10, TimeUnit.SECONDS);
    assertThat(changed.json().get("value").asText()).as(changed.body()).isEqualTo("again");
    assertThat(changed.json().get("version").asLong()).isGreaterThan(version);
  }

  @Test
  void aWaitThatRunsOutAnswersNotSet() {
    WorkerClient worker = server.worker("st-out");
    long run = worker.start(1);
    long t0 = System.nanoTime();
    Api.Response r = key("st-out", run, "never", "?waitSeconds=1");
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("set").asBoolean()).isFalse();
    assertThat(r.json().get("running").asBoolean()).isTrue();
    assertThat(r.json().has("value")).isFalse();
    assertThat(ms).isBetween(900L, 5_000L);
  }

  @Test
  void aRunThatEndedAnswersAtOnce() {
    WorkerClient worker = server.worker("st-ended");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    worker.complete(
        task,
        map("step", step("a", map("k", 1)), "result", Map.of("status", "completed", "output", 1)));
    long t0 = System.nanoTime();
    Api.Response r = key("st-ended", run, "other", "?waitSeconds=20");
    assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(5));
    assertThat(r.json().get("running").asBoolean()).as(r.body()).isFalse();
    assertThat(r.json().get("set").asBoolean()).isFalse();
    assertThat(key("st-ended", run, "k", "?waitSeconds=20").json().get("value").asInt())
        .isEqualTo(1);
  }

  @Test
  void anUnknownRunIsA404AndABadKeyOrWaitA400NamingIt() {
    assertThat(server.api().get("/v1/workflows/st-none/runs/999999/state").status()).isEqualTo(404);
    assertThat(key("st-none", 999999, "k", "").status()).isEqualTo(404);
    WorkerClient worker = server.worker("st-bad");
    long run = worker.start(1);
    Object[][] cases = {
      {"__engine", "", "key"},
      {"k", "?waitSeconds=31", "waitSeconds"},
      {"k", "?waitSeconds=x", "waitSeconds"},
      {"k", "?afterVersion=-1", "afterVersion"},
    };
    for (Object[] c : cases) {
      Api.Response r = key("st-bad", run, (String) c[0], (String) c[1]);
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
      assertThat(r.json().get("field").asText()).as(r.body()).isEqualTo(c[2]);
    }
  }

  @Test
  void changesThatBreakALimitAreA400NamingTheFieldAndJournalNothing() {
    WorkerClient worker = server.worker("st-limits");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    String big = "x".repeat(70_000);
    Object[][] cases = {
      {map("bad key", 1), "step.state"},
      {map("__mine", 1), "step.state"},
      {map("k", big), "step.state"},
    };
    for (Object[] c : cases) {
      @SuppressWarnings("unchecked")
      Api.Response r = worker.complete(task, inline(step("a", (Map<String, Object>) c[0])));
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.json().get("field").asText()).as(r.body()).isEqualTo(c[1]);
    }
    Api.Response notAMap =
        worker.complete(task, inline(map("name", "a", "kind", "run", "state", List.of(1))));
    assertThat(notAMap.status()).as(notAMap.body()).isEqualTo(400);
    assertThat(notAMap.json().get("field").asText()).isEqualTo("step.state");

    // Through the parallel steps route and a batch, the same.
    Map<String, Object> journal = new LinkedHashMap<>();
    journal.put("messageId", task.get("messageId").asLong());
    journal.put("receipt", task.get("receipt").asText());
    journal.put("steps", List.of(step("p", map("k", big))));
    Api.Response steps =
        server.api().post("/v1/workflows/st-limits/runs/" + run + "/steps", journal);
    assertThat(steps.status()).as(steps.body()).isEqualTo(400);
    assertThat(steps.json().get("field").asText()).isEqualTo("steps[0].state");
    Api.Response batch =
        worker.completeBatch(
            List.of(
                item(task, "step", step("a", map("bad key", 1)), "next", Map.of("inline", true))));
    JsonNode answer = batch.json().get("results").get(0);
    assertThat(answer.get("outcome").asText()).as(batch.body()).isEqualTo("rejected");
    assertThat(answer.get("status").asInt()).isEqualTo(400);
    assertThat(answer.get("detail").asText()).contains("step.state");

    assertThat(worker.journal(run)).isEmpty();
    assertThat(state("st-limits", run).get("state").size()).isZero();

    // A run holds at most 100 keys: the database counts what the run holds already.
    Map<String, Object> sixty = new LinkedHashMap<>();
    Map<String, Object> fifty = new LinkedHashMap<>();
    for (int i = 0; i < 60; i++) {
      sixty.put("a" + i, i);
    }
    for (int i = 0; i < 50; i++) {
      fifty.put("b" + i, i);
    }
    assertThat(worker.complete(task, inline(step("first", sixty))).json().get("outcome").asText())
        .isEqualTo("ok");
    Api.Response tooMany = worker.complete(task, inline(step("second", fifty)));
    assertThat(tooMany.status()).as(tooMany.body()).isEqualTo(400);
    assertThat(tooMany.json().get("detail").asText()).contains("at most 100");
    assertThat(worker.journal(run)).containsExactly("first");
    assertThat(state("st-limits", run).get("state").size()).isEqualTo(60);
  }

  @Test
  void aRestartRevertsAndAForkCopiesTheStateOfTheirRows() {
    WorkerClient worker = server.worker("st-restart");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    worker.complete(task, inline(step("a", map("k", 1, "a", true))));
    worker.complete(task, inline(step("b", map("k", 2, "b", true))));
    worker.complete(
        task,
        map(
            "step",
            step("c", map("k", 3)),
            "result",
            Map.of("status", "failed", "error", Map.of("type", "E", "message", "no"))));
    assertThat(state("st-restart", run).get("state").toString())
        .isEqualTo("{\"a\":true,\"b\":true,\"k\":3}");

    Api.Response fork =
        server
            .api()
            .post("/v1/workflows/st-restart/runs/" + run + "/fork", Map.of("fromStep", "b"));
    assertThat(fork.status()).as(fork.body()).isEqualTo(201);
    long forked = fork.json().get("runId").asLong();
    assertThat(state("st-restart", forked).get("state").toString())
        .isEqualTo("{\"a\":true,\"k\":1}");

    Api.Response restart =
        server
            .api()
            .post("/v1/workflows/st-restart/runs/" + run + "/restart", Map.of("fromStep", "b"));
    assertThat(restart.status()).as(restart.body()).isEqualTo(200);
    assertThat(state("st-restart", run).get("state").toString()).isEqualTo("{\"a\":true,\"k\":1}");
    // The set-aside rows keep their changes, for reading.
    JsonNode all =
        server.api().get("/v1/workflows/st-restart/runs/" + run + "/steps?setAside=true").json();
    assertThat(all.get("steps").get(1).get("setAside").asBoolean()).isTrue();
    assertThat(all.get("steps").get(1).get("state").get("k").asInt()).isEqualTo(2);
  }

  @Test
  void aKeysVersionKeepsGrowingAfterARestart() {
    WorkerClient worker = server.worker("st-grow");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    worker.complete(task, inline(step("a", map("k", 1))));
    worker.complete(
        task,
        map(
            "step",
            step("b", map("k", 2)),
            "result",
            Map.of("status", "failed", "error", Map.of("type", "E", "message", "no"))));
    long before = state("st-grow", run).get("versions").get("k").asLong();
    Api.Response restart =
        server
            .api()
            .post("/v1/workflows/st-grow/runs/" + run + "/restart", Map.of("fromStep", "b"));
    assertThat(restart.status()).as(restart.body()).isEqualTo(200);
    JsonNode again = worker.pollOne();
    // b's row takes b's old place in the journal; k's version is past every one it had.
    worker.complete(again, inline(step("b", map("k", 3))));
    JsonNode k = key("st-grow", run, "k", "?afterVersion=" + before).json();
    assertThat(k.get("set").asBoolean()).as(k.toString()).isTrue();
    assertThat(k.get("value").asInt()).isEqualTo(3);
    assertThat(k.get("version").asLong()).isGreaterThan(before);
  }

  @Test
  void aWaitIsAnsweredAtOnceWhenTheRunEnds() throws Exception {
    WorkerClient worker = server.worker("st-ends");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    CompletableFuture<Api.Response> waiting =
        CompletableFuture.supplyAsync(() -> key("st-ends", run, "never", "?waitSeconds=25"));
    Thread.sleep(300);
    assertThat(waiting).isNotDone();
    long t0 = System.nanoTime();
    worker.complete(task, map("result", Map.of("status", "completed", "output", 1)));
    Api.Response r = waiting.get(10, TimeUnit.SECONDS);
    assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(5));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.json().get("running").asBoolean()).as(r.body()).isFalse();
    assertThat(r.json().get("set").asBoolean()).isFalse();
  }

  @Test
  void anExplicitNullStateIsNoChangesOnEveryPath() {
    WorkerClient worker = server.worker("st-null");
    long run = worker.start(1);
    JsonNode task = worker.pollOne();
    Map<String, Object> a = step("a", null);
    a.put("state", null);
    Api.Response inline = worker.complete(task, inline(a));
    assertThat(inline.json().get("outcome").asText()).as(inline.body()).isEqualTo("ok");

    Map<String, Object> p = step("p", null);
    p.put("state", null);
    Map<String, Object> journal = new LinkedHashMap<>();
    journal.put("messageId", task.get("messageId").asLong());
    journal.put("receipt", task.get("receipt").asText());
    journal.put("steps", List.of(p));
    Api.Response steps = server.api().post("/v1/workflows/st-null/runs/" + run + "/steps", journal);
    assertThat(steps.status()).as(steps.body()).isEqualTo(200);

    Map<String, Object> b = step("b", null);
    b.put("state", null);
    Api.Response batch =
        worker.completeBatch(List.of(item(task, "step", b, "next", Map.of("inline", true))));
    assertThat(batch.status()).as(batch.body()).isEqualTo(200);

    JsonNode rows = server.api().get("/v1/workflows/st-null/runs/" + run + "/steps").json();
    assertThat(rows.get("steps")).hasSize(3);
    for (JsonNode row : rows.get("steps")) {
      assertThat(row.has("state")).as(row.toString()).isFalse();
    }
    assertThat(state("st-null", run).get("state").size()).isZero();
  }
}
