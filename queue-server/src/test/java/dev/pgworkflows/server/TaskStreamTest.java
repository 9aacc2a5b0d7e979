package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Task streams over real HTTP: a stream carries as many tasks as the worker has free slots, a slot
 * report on a write frees room for more, a start is handed to a waiting stream, an ended stream
 * closes, and bad input is refused without changing anything.
 */
class TaskStreamTest {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final ExecutorService READERS = Executors.newCachedThreadPool();

  // A slow fallback tick, so nothing here is found by it.
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000")
          .and("WORKFLOWS_MAX_TASK_STREAMS", "100");

  private static final Api api = server.api();

  @AfterAll
  static void stopReaders() {
    READERS.shutdownNow();
  }

  /** An open stream: its id, its lines as they come, and how many blank lines came. */
  private record Opened(
      String id,
      LinkedBlockingQueue<JsonNode> lines,
      AtomicInteger blanks,
      CompletableFuture<Void> end) {
    /** The next tasks line within {@code ms}, or null. */
    JsonNode nextTasks(long ms) throws InterruptedException {
      JsonNode line = lines.poll(ms, TimeUnit.MILLISECONDS);
      return line == null ? null : line.get("tasks");
    }
  }

  /** Opens a stream and sends its first slot report, as a worker does once it has the id. */
  private static Opened open(String wf, int slots, int seconds) throws Exception {
    Opened s = openQuiet(wf, slots, seconds);
    assertThat(begin(wf, s.id(), s.id() + " 1 0 " + slots).status()).isEqualTo(204);
    return s;
  }

  private static Api.Response begin(String wf, String id, String report) {
    return api.send(
        "POST",
        "/v1/workflows/" + wf + "/tasks/stream/" + id + "/slots",
        null,
        report == null ? Map.of() : Map.of("Task-Stream-Slots", report));
  }

  /** Opens a stream without reporting to it. */
  private static Opened openQuiet(String wf, int slots, int seconds) throws Exception {
    String body =
        Api.JSON.writeValueAsString(
            Map.of("versions", List.of(1), "slots", slots, "seconds", seconds));
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(server.url() + "/v1/workflows/" + wf + "/tasks/stream"))
            .header("Authorization", "Bearer local")
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<Stream<String>> resp = CLIENT.send(req, HttpResponse.BodyHandlers.ofLines());
    assertThat(resp.statusCode()).isEqualTo(200);
    assertThat(resp.headers().firstValue("Content-Type").orElse(""))
        .startsWith("application/x-ndjson");
    assertThat(resp.headers().firstValue("X-Accel-Buffering")).contains("no");
    Iterator<String> it = resp.body().iterator();
    JsonNode first = Api.JSON.readTree(it.next());
    assertThat(first.get("stream").asText()).isNotBlank();
    LinkedBlockingQueue<JsonNode> lines = new LinkedBlockingQueue<>();
    AtomicInteger blanks = new AtomicInteger();
    CompletableFuture<Void> end =
        CompletableFuture.runAsync(
            () -> {
              while (it.hasNext()) {
                String line = it.next();
                if (line.isEmpty()) {
                  blanks.incrementAndGet();
                  continue;
                }
                try {
                  lines.add(Api.JSON.readTree(line));
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }
            },
            READERS);
    return new Opened(first.get("stream").asText(), lines, blanks, end);
  }

  private static long startRun(String wf) {
    return api.post("/v1/workflows/" + wf + "/runs", Map.of("input", 1))
        .json()
        .get("runId")
        .asLong();
  }

  /** Ends the run of {@code task}, with a slot report when {@code report} is not null. */
  private static Api.Response finish(String wf, JsonNode task, String report) {
    return api.send(
        "POST",
        "/v1/workflows/" + wf + "/runs/" + task.get("runId").asLong() + "/complete",
        Map.of(
            "messageId", task.get("messageId").asLong(),
            "receipt", task.get("receipt").asText(),
            "result", Map.of("status", "completed", "output", 1)),
        report == null ? Map.of() : Map.of("Task-Stream-Slots", report));
  }

  @Test
  void aStreamCarriesTasksForItsFreeSlotsAndAReportFreesRoomForMore() throws Exception {
    Opened s = open("st-credit", 2, 20);
    long[] runs = {startRun("st-credit"), startRun("st-credit"), startRun("st-credit")};

    JsonNode first = s.nextTasks(5_000);
    assertThat(first).as("the stream delivered").isNotNull();
    int seen = first.size();
    JsonNode held = first.get(0);
    if (seen < 2) {
      assertThat(s.nextTasks(5_000)).hasSize(1);
      seen = 2;
    }
    assertThat(seen).isEqualTo(2);
    assertThat(s.nextTasks(300)).as("no third task while both slots are busy").isNull();

    assertThat(finish("st-credit", held, s.id() + " 2 2 1").json().get("outcome").asText())
        .isEqualTo("ok");
    JsonNode third = s.nextTasks(5_000);
    assertThat(third).as("the report freed a slot").hasSize(1);
    assertThat(third.get(0).get("runId").asLong()).isIn(runs[0], runs[1], runs[2]);
    assertThat(third.get(0).get("runId").asLong()).isNotEqualTo(held.get("runId").asLong());

    // An older report counts for nothing.
    finish("st-credit", third.get(0), s.id() + " 2 3 5");
    startRun("st-credit");
    assertThat(s.nextTasks(300)).as("the stale report gave no room").isNull();
    api.delete("/v1/workflows/st-credit/tasks/stream/" + s.id());
  }

  @Test
  void aStreamSendsNothingBeforeItsFirstReportSoAHeldBackStreamHoldsNoTask() throws Exception {
    Opened s = openQuiet("st-begin", 4, 20);
    long run = startRun("st-begin");
    assertThat(s.nextTasks(500)).as("nothing before the first report").isNull();

    assertThat(begin("st-begin", s.id(), null).status()).isEqualTo(400);
    assertThat(begin("st-begin", s.id(), "other 1 0 4").status()).isEqualTo(400);
    assertThat(begin("st-begin", s.id(), s.id() + " 0 0 4").status()).isEqualTo(400);
    assertThat(begin("st-begin", "gone", "gone 1 0 4").status()).isEqualTo(404);
    assertThat(begin("other", s.id(), s.id() + " 1 0 4").status()).isEqualTo(404);
    assertThat(s.nextTasks(300)).as("the refused reports began nothing").isNull();

    assertThat(begin("st-begin", s.id(), s.id() + " 1 0 4").status()).isEqualTo(204);
    JsonNode tasks = s.nextTasks(5_000);
    assertThat(tasks).as("the report began the stream").hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(run);
    api.delete("/v1/workflows/st-begin/tasks/stream/" + s.id());
  }

  @Test
  void aQuietStreamWritesABlankLineEachSecondUntilItsTimeIsUp() throws Exception {
    Opened s = open("st-quiet", 1, 4);
    s.end().get(10, TimeUnit.SECONDS);
    // One for each quiet second; a busy machine may delay one past the stream's end.
    assertThat(s.blanks().get()).as("blank lines over the stream's 4 s").isBetween(3, 4);
    assertThat(s.lines()).isEmpty();
  }

  @Test
  void aStartIsHandedToAWaitingStream() throws Exception {
    Opened s = open("st-start", 4, 20);
    api.awaitWaitingPolls(1);
    long run = startRun("st-start");
    JsonNode tasks = s.nextTasks(5_000);
    assertThat(tasks).hasSize(1);
    assertThat(tasks.get(0).get("runId").asLong()).isEqualTo(run);
    assertThat(tasks.get(0).get("reason").asText()).isEqualTo("start");
    assertThat(finish("st-start", tasks.get(0), null).json().get("outcome").asText())
        .isEqualTo("ok");

    // The stream goes on waiting: the next start reaches it too.
    long next = startRun("st-start");
    assertThat(s.nextTasks(5_000).get(0).get("runId").asLong()).isEqualTo(next);
    api.delete("/v1/workflows/st-start/tasks/stream/" + s.id());
  }

  /**
   * A nearly full worker's stream waits a moment for room for a lot of tasks before it takes more;
   * what is due still reaches it when no more room comes.
   */
  @Test
  void aStreamWithLessRoomThanALotStillTakesWhatIsDue() throws Exception {
    for (int i = 0; i < 32; i++) {
      startRun("st-lot");
    }
    Opened s = open("st-lot", 32, 20);
    List<JsonNode> held = new java.util.ArrayList<>();
    while (held.size() < 32) {
      JsonNode tasks = s.nextTasks(5_000);
      assertThat(tasks).as("the stream delivered what was due").isNotNull();
      tasks.forEach(held::add);
    }
    assertThat(held).hasSize(32);
    long late = startRun("st-lot");
    assertThat(s.nextTasks(300)).as("no task while every slot is busy").isNull();

    // Two slots free: less than a lot (8 of 32 slots), and nothing else frees more.
    assertThat(finish("st-lot", held.get(0), s.id() + " 2 32 2").json().get("outcome").asText())
        .isEqualTo("ok");
    JsonNode more = s.nextTasks(5_000);
    assertThat(more).as("the due run came all the same").hasSize(1);
    assertThat(more.get(0).get("runId").asLong()).isEqualTo(late);
    api.delete("/v1/workflows/st-lot/tasks/stream/" + s.id());
  }

  @Test
  void anEndedStreamClosesAndItsTasksComeBack() throws Exception {
    Opened s = open("st-end", 1, 20);
    assertThat(api.delete("/v1/workflows/st-end/tasks/stream/" + s.id()).status()).isEqualTo(204);
    s.end().get(5, TimeUnit.SECONDS);
    assertThat(api.delete("/v1/workflows/st-end/tasks/stream/" + s.id()).status()).isEqualTo(404);
    assertThat(api.delete("/v1/workflows/other/tasks/stream/" + s.id()).status()).isEqualTo(404);

    // A stream that runs out of time ends by itself.
    Opened brief = open("st-end", 1, 1);
    brief.end().get(10, TimeUnit.SECONDS);

    long run = startRun("st-end");
    Api.Response poll =
        api.post(
            "/v1/workflows/st-end/tasks/poll", Map.of("versions", List.of(1), "waitSeconds", 5));
    assertThat(poll.json().get("tasks")).hasSize(1);
    assertThat(poll.json().get("tasks").get(0).get("runId").asLong()).isEqualTo(run);
  }

  @Test
  void badStreamsAndReportsAreRefusedAndChangeNothing() throws Exception {
    for (Object bad :
        List.<Object>of(
            Map.of(),
            Map.of("versions", List.of()),
            Map.of("versions", List.of(1), "slots", -1),
            Map.of("versions", List.of(1), "slots", 1001),
            Map.of("versions", List.of(1), "seconds", 0),
            Map.of("versions", List.of(1), "seconds", 31),
            Map.of("versions", List.of(1), "leaseSeconds", 0),
            Map.of("versions", List.of(1), "wait", 1))) {
      Api.Response r = api.post("/v1/workflows/st-bad/tasks/stream", bad);
      assertThat(r.status()).as("%s", bad).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
    }

    startRun("st-bad");
    JsonNode task =
        api.post(
                "/v1/workflows/st-bad/tasks/poll", Map.of("versions", List.of(1), "waitSeconds", 5))
            .json()
            .get("tasks")
            .get(0);
    for (String bad : List.of("x", "s 1 2", "s 0 1 1", "s 1 -1 1", "s 1 1 1001", "s one 1 1")) {
      Api.Response r = finish("st-bad", task, bad);
      assertThat(r.status()).as(bad).isEqualTo(400);
      assertThat(r.isProblem()).isTrue();
    }
    JsonNode run = api.get("/v1/workflows/st-bad/runs/" + task.get("runId").asLong()).json();
    assertThat(run.get("status").asText())
        .as("the refused completions did nothing")
        .isEqualTo("running");
    // A report for a stream this server does not have is ignored; the write goes through.
    assertThat(finish("st-bad", task, "gone 1 0 4").json().get("outcome").asText()).isEqualTo("ok");
  }

  @Test
  void aServerHoldsAtMostItsCapOfStreamsAndRefusesTheNextClearly() throws Exception {
    String body = Api.JSON.writeValueAsString(Map.of("versions", List.of(1), "seconds", 20));
    List<CompletableFuture<HttpResponse<Stream<String>>>> opening = new java.util.ArrayList<>();
    for (int i = 0; i < 100; i++) {
      opening.add(
          CLIENT.sendAsync(
              HttpRequest.newBuilder(URI.create(server.url() + "/v1/workflows/st-cap/tasks/stream"))
                  .header("Authorization", "Bearer local")
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofLines()));
    }
    List<String> ids = new java.util.ArrayList<>();
    for (var f : opening) {
      HttpResponse<Stream<String>> r = f.get(30, TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      ids.add(Api.JSON.readTree(r.body().iterator().next()).get("stream").asText());
    }
    Api.Response refused =
        api.post("/v1/workflows/st-cap/tasks/stream", Map.of("versions", List.of(1)));
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.isProblem()).isTrue();
    for (String id : ids) {
      assertThat(api.delete("/v1/workflows/st-cap/tasks/stream/" + id).status()).isEqualTo(204);
    }
    // Ended streams make room again.
    Opened again = open("st-cap", 1, 20);
    api.delete("/v1/workflows/st-cap/tasks/stream/" + again.id());
  }
}
