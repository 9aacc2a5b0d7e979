package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.server.testing.WorkerClient;
import dev.pgworkflows.testing.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A run's streams over real HTTP, every exchange checked against openapi.yaml: writes (repeats of
 * an identity skipped), pages from an offset, live Server-Sent Events ending at close or run end,
 * bad input refused with nothing changed, entries read the same after the server restarts,
 * followers capped (503) and their answers bounded in time, and nothing left registered after a
 * follow.
 */
class RunStreamRoutesTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static TestServer server;
  private static Api api;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    api = server.api();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static String path(String workflow, long run, String stream) {
    return "/v1/workflows/" + workflow + "/runs/" + run + "/streams/" + stream;
  }

  private static Map<String, Object> entry(String writer, int seq, Object value) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("writer", writer);
    e.put("seq", seq);
    e.put("value", value);
    return e;
  }

  private static Api.Response write(String workflow, long run, String stream, Object... entries) {
    return api.post(path(workflow, run, stream), Map.of("entries", List.of(entries)));
  }

  private static Api.Response close(String workflow, long run, String stream) {
    return api.post(path(workflow, run, stream), Map.of("entries", List.of(), "close", true));
  }

  private static List<Integer> values(JsonNode page) {
    List<Integer> out = new ArrayList<>();
    page.get("entries").forEach(e -> out.add(e.get("value").asInt()));
    return out;
  }

  @Test
  void repeatedIdentitiesAreSkippedAndPagesReadFromAnOffset() {
    WorkerClient worker = new WorkerClient(api, "stream-pages");
    long run = worker.start("in");
    Api.Response first =
        write("stream-pages", run, "out", entry("a", 0, 10), entry("a", 1, 11), entry("", 0, 12));
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    assertThat(first.json().get("written").asInt()).isEqualTo(3);
    // A retried attempt of step a: its first two writes again, then a third.
    Api.Response again =
        write("stream-pages", run, "out", entry("a", 0, 99), entry("a", 1, 99), entry("a", 2, 13));
    assertThat(again.json().get("written").asInt()).isEqualTo(1);
    assertThat(again.json().get("next").asLong()).isEqualTo(4);

    JsonNode page = api.get(path("stream-pages", run, "out") + "?from=1&limit=2").json();
    assertThat(values(page)).containsExactly(11, 12);
    assertThat(page.get("entries").get(0).get("offset").asLong()).isEqualTo(1);
    assertThat(page.get("next").asLong()).isEqualTo(3);
    assertThat(page.get("closed").asBoolean()).isFalse();
    assertThat(page.get("end").asBoolean()).isFalse();
    JsonNode rest = api.get(path("stream-pages", run, "out") + "?from=3").json();
    assertThat(values(rest)).containsExactly(13);

    JsonNode listing = api.get("/v1/workflows/stream-pages/runs/" + run + "/streams").json();
    assertThat(listing.get("streams").get(0).get("name").asText()).isEqualTo("out");
    assertThat(listing.get("streams").get(0).get("size").asLong()).isEqualTo(4);
    JsonNode none = api.get(path("stream-pages", run, "nothing-yet")).json();
    assertThat(none.get("entries")).isEmpty();
    assertThat(none.get("end").asBoolean()).isFalse();
  }

  @Test
  void badNamesOversizeValuesAndWritesAfterCloseAreRefusedAndChangeNothing() {
    WorkerClient worker = new WorkerClient(api, "stream-refusals");
    long run = worker.start("in");
    write("stream-refusals", run, "out", entry("", 0, 1));

    Api.Response badName = write("stream-refusals", run, "bad:name", entry("", 1, 2));
    assertThat(badName.status()).isEqualTo(400);
    assertThat(badName.json().get("field").asText()).isEqualTo("stream");
    assertThat(badName.json().get("detail").asText()).contains("stream name");

    Api.Response badWriter = write("stream-refusals", run, "out", entry("a b", 1, 2));
    assertThat(badWriter.status()).isEqualTo(400);
    assertThat(badWriter.json().get("field").asText()).isEqualTo("entries[0].writer");

    Api.Response oversize =
        write("stream-refusals", run, "out", entry("", 1, 2), entry("", 2, "x".repeat(70_000)));
    assertThat(oversize.status()).isEqualTo(400);
    assertThat(oversize.json().get("field").asText()).isEqualTo("entries[1].value");
    assertThat(oversize.json().get("detail").asText()).contains("at most 65536");

    Api.Response unknownRun = write("stream-refusals", 999_999, "out", entry("", 0, 1));
    assertThat(unknownRun.status()).isEqualTo(404);

    assertThat(close("stream-refusals", run, "out").json().get("closed").asBoolean()).isTrue();
    assertThat(close("stream-refusals", run, "out").status()).isEqualTo(200);
    // A repeat of a stored write is still fine (a replay after the close); a new one is not.
    assertThat(write("stream-refusals", run, "out", entry("", 0, 1)).status()).isEqualTo(200);
    Api.Response afterClose = write("stream-refusals", run, "out", entry("", 1, 2));
    assertThat(afterClose.status()).isEqualTo(409);
    assertThat(afterClose.json().get("detail").asText()).contains("is closed");

    JsonNode page = api.get(path("stream-refusals", run, "out")).json();
    assertThat(values(page)).containsExactly(1);
    assertThat(page.get("end").asBoolean()).isTrue();

    worker.complete(worker.pollOne(), Map.of("result", Map.of("status", "completed")));
    Api.Response afterEnd = write("stream-refusals", run, "other", entry("", 0, 1));
    assertThat(afterEnd.status()).isEqualTo(409);
    assertThat(afterEnd.json().get("detail").asText()).contains("has ended (completed)");
    Api.Response badFrom = api.get(path("stream-refusals", run, "out") + "?from=-1");
    assertThat(badFrom.status()).isEqualTo(400);
    assertThat(badFrom.json().get("field").asText()).isEqualTo("from");
  }

  /** Opens an event stream and hands its lines to a queue as they arrive. */
  private static BlockingQueue<String> follow(String path, String lastEventId) {
    return follow(server.url(), path, lastEventId);
  }

  /** Opens an event stream on the server at {@code base}, as {@link #follow(String, String)}. */
  private static BlockingQueue<String> follow(String base, String path, String lastEventId) {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    HttpRequest.Builder req =
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Authorization", "Bearer " + TestServer.TOKEN)
            .header("Accept", "text/event-stream");
    if (lastEventId != null) {
      req.header("Last-Event-ID", lastEventId);
    }
    CompletableFuture.runAsync(
        () -> {
          try {
            HttpResponse<Stream<String>> r =
                HTTP.send(req.build(), HttpResponse.BodyHandlers.ofLines());
            lines.add("status: " + r.statusCode());
            r.body().forEach(lines::add);
            lines.add("<closed>");
          } catch (Exception e) {
            lines.add("<failed " + e + ">");
          }
        });
    return lines;
  }

  /** The next line that is not blank or a comment, waiting up to 10 s. */
  private static String nextLine(BlockingQueue<String> lines) throws InterruptedException {
    while (true) {
      String line = lines.poll(10, TimeUnit.SECONDS);
      assertThat(line).as("a line within 10 s").isNotNull();
      if (!line.isEmpty() && !line.startsWith(":")) {
        return line;
      }
    }
  }

  @Test
  void anEventStreamFollowsWritesAsTheyCommitAndEndsWhenTheStreamCloses() throws Exception {
    WorkerClient worker = new WorkerClient(api, "stream-live");
    long run = worker.start("in");
    write("stream-live", run, "tokens", entry("gen", 0, 1));
    BlockingQueue<String> lines = follow(path("stream-live", run, "tokens"), null);
    assertThat(nextLine(lines)).isEqualTo("status: 200");
    assertThat(nextLine(lines)).isEqualTo("id: 0");
    assertThat(nextLine(lines)).startsWith("data: {").contains("\"value\":1");

    long t0 = System.nanoTime();
    write("stream-live", run, "tokens", entry("gen", 1, 2));
    assertThat(nextLine(lines)).isEqualTo("id: 1");
    // Woken by the write's notification, not by the one-second fallback read.
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(900));
    assertThat(nextLine(lines)).contains("\"value\":2");

    close("stream-live", run, "tokens");
    assertThat(nextLine(lines)).isEqualTo("event: end");
    assertThat(nextLine(lines)).contains("\"next\":2").contains("\"runStatus\":\"running\"");
    assertThat(nextLine(lines)).isEqualTo("<closed>");

    // The same answer, whole, checked against openapi.yaml's text/event-stream.
    Api.Response whole =
        api.send(
            "GET", path("stream-live", run, "tokens"), null, Map.of("Accept", "text/event-stream"));
    assertThat(whole.status()).isEqualTo(200);
    assertThat(whole.header("Content-Type")).startsWith("text/event-stream");
    assertThat(whole.body()).contains("id: 0\n").contains("id: 1\n").contains("event: end\n");
    // Last-Event-ID resumes after the entry it names.
    Api.Response resumed =
        api.send(
            "GET",
            path("stream-live", run, "tokens"),
            null,
            Map.of("Accept", "text/event-stream", "Last-Event-ID", "0"));
    assertThat(resumed.body()).doesNotContain("id: 0\n").contains("id: 1\n");
  }

  @Test
  void anEventStreamEndsWhenTheRunEnds() throws Exception {
    WorkerClient worker = new WorkerClient(api, "stream-run-end");
    long run = worker.start("in");
    JsonNode task = worker.pollOne();
    BlockingQueue<String> lines = follow(path("stream-run-end", run, "progress"), null);
    assertThat(nextLine(lines)).isEqualTo("status: 200");
    write("stream-run-end", run, "progress", entry("", 0, 1));
    assertThat(nextLine(lines)).isEqualTo("id: 0");
    nextLine(lines);
    worker.complete(task, Map.of("result", Map.of("status", "completed")));
    assertThat(nextLine(lines)).isEqualTo("event: end");
    assertThat(nextLine(lines)).contains("\"runStatus\":\"completed\"");
  }

  @Test
  void entriesReadFromAnOffsetAreTheSameAfterTheServerRestarts() {
    TestDatabase db = TestDatabase.fresh();
    TestServer first = TestServer.start(db, Map.of());
    long run;
    String before;
    try {
      Api a = first.api();
      run = new WorkerClient(a, "stream-restart").start("in");
      List<Object> entries = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        entries.add(entry("", i, Map.of("n", i)));
      }
      assertThat(a.post(path("stream-restart", run, "out"), Map.of("entries", entries)).status())
          .isEqualTo(200);
      before =
          a.get(path("stream-restart", run, "out") + "?from=2").json().get("entries").toString();
    } finally {
      first.close();
    }
    try (TestServer second = TestServer.start(db, Map.of())) {
      JsonNode after = second.api().get(path("stream-restart", run, "out") + "?from=2").json();
      assertThat(after.get("entries").toString()).isEqualTo(before);
      assertThat(after.get("entries")).hasSize(3);
      assertThat(after.get("entries").get(0).get("offset").asLong()).isEqualTo(2);
    }
  }

  /** Waits up to 5 s for {@code condition}. */
  private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("the condition within 5 s").isLessThan(until);
      Thread.sleep(20);
    }
  }

  /** A server admitting two followers, each answer lasting two seconds. */
  private static QueueServer smallFollowingServer(TestDatabase db) {
    Map<String, String> env = new java.util.HashMap<>();
    env.put("WORKFLOWS_PORT", "0");
    env.put("WORKFLOWS_DB_POOL_SIZE", "4");
    ServerConfig config =
        ServerConfig.from(env).withDatabase(db.jdbcUrl(), db.user(), db.password());
    return QueueServer.builder(config).streamFollowing(2, Duration.ofSeconds(2)).start();
  }

  @Test
  void followersBeyondTheCapAreAnswered503AndAnAnswerEndsInTimeWithoutAnEndEvent()
      throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (QueueServer small = smallFollowingServer(db)) {
      String base = "http://localhost:" + small.port();
      Api a = new Api(base, TestServer.TOKEN);
      long run = new WorkerClient(a, "stream-capped").start("in");
      a.post(path("stream-capped", run, "out"), Map.of("entries", List.of(entry("", 0, 1))));

      BlockingQueue<String> first = follow(base, path("stream-capped", run, "out"), null);
      BlockingQueue<String> second = follow(base, path("stream-capped", run, "out"), null);
      assertThat(nextLine(first)).isEqualTo("status: 200");
      assertThat(nextLine(second)).isEqualTo("status: 200");
      Api.Response third =
          a.send(
              "GET",
              path("stream-capped", run, "out"),
              null,
              Map.of("Accept", "text/event-stream"));
      assertThat(third.status()).isEqualTo(503);
      assertThat(third.isProblem()).isTrue();
      assertThat(third.json().get("detail").asText()).contains("2 readers following streams");
      // Pages are still read.
      assertThat(a.get(path("stream-capped", run, "out")).status()).isEqualTo(200);

      // Each answer ends after its two seconds, without an end event; the client resumes from
      // there.
      assertThat(nextLine(first)).isEqualTo("id: 0");
      nextLine(first);
      long t0 = System.nanoTime();
      assertThat(nextLine(first)).isEqualTo("<closed>");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(4));
      assertThat(first).noneMatch(l -> l.startsWith("event: end"));
      StreamFollowers followers = small.streamFollowers();
      awaitTrue(() -> followers.following() == 0);

      a.post(path("stream-capped", run, "out"), Map.of("entries", List.of(entry("", 1, 2))));
      BlockingQueue<String> resumed = follow(base, path("stream-capped", run, "out"), "0");
      assertThat(nextLine(resumed)).isEqualTo("status: 200");
      assertThat(nextLine(resumed)).isEqualTo("id: 1");
    }
  }

  @Test
  void aFollowLeavesNothingRegisteredWhenTheRunIsUnknownOrTheStreamEnds() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (QueueServer small = smallFollowingServer(db)) {
      String base = "http://localhost:" + small.port();
      Api a = new Api(base, TestServer.TOKEN);
      StreamFollowers followers = small.streamFollowers();

      Api.Response unknown =
          a.send(
              "GET",
              path("stream-gone", 999_999, "out"),
              null,
              Map.of("Accept", "text/event-stream"));
      assertThat(unknown.status()).isEqualTo(404);
      assertThat(followers.runsFollowed()).isZero();
      assertThat(followers.following()).isZero();

      long run = new WorkerClient(a, "stream-gone").start("in");
      BlockingQueue<String> lines = follow(base, path("stream-gone", run, "out"), null);
      assertThat(nextLine(lines)).isEqualTo("status: 200");
      a.post(
          path("stream-gone", run, "out"),
          Map.of("entries", List.of(entry("", 0, 1)), "close", true));
      assertThat(nextLine(lines)).isEqualTo("id: 0");
      nextLine(lines);
      assertThat(nextLine(lines)).isEqualTo("event: end");
      nextLine(lines);
      assertThat(nextLine(lines)).isEqualTo("<closed>");
      awaitTrue(() -> followers.following() == 0);
      assertThat(followers.runsFollowed()).isZero();
    }
  }

  @Test
  void anEmptyWriteCreatesNoStreamAndNamesOfDotsAloneAreRefused() {
    WorkerClient worker = new WorkerClient(api, "stream-small");
    long run = worker.start("in");
    Api.Response empty = api.post(path("stream-small", run, "out"), Map.of("entries", List.of()));
    assertThat(empty.status()).isEqualTo(200);
    assertThat(empty.json().get("written").asInt()).isZero();
    assertThat(api.get("/v1/workflows/stream-small/runs/" + run + "/streams").json().get("streams"))
        .isEmpty();
    Api.Response dots = write("stream-small", run, "...", entry("", 0, 1));
    assertThat(dots.status()).isEqualTo(400);
    assertThat(dots.json().get("field").asText()).isEqualTo("stream");
    assertThat(dots.json().get("detail").asText()).contains("not dots alone");
    assertThat(api.get("/v1/workflows/stream-small/runs/" + run + "/streams").json().get("streams"))
        .isEmpty();
  }

  @Test
  void aRunsHundredAndFirstStreamIsRefused() {
    WorkerClient worker = new WorkerClient(api, "stream-many");
    long run = worker.start("in");
    for (int i = 0; i < 100; i++) {
      assertThat(write("stream-many", run, "s" + i, entry("", 0, i)).status()).isEqualTo(200);
    }
    Api.Response refused = write("stream-many", run, "s100", entry("", 0, 1));
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.json().get("detail").asText()).contains("has 100 streams");
    assertThat(
            api.get("/v1/workflows/stream-many/runs/" + run + "/streams")
                .json()
                .get("streams")
                .size())
        .isEqualTo(100);
  }
}
