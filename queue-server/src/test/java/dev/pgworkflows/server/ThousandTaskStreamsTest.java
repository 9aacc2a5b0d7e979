package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A thousand open task streams hold no request thread each: the server's thread pool stays small
 * while they wait, and a start still reaches a stream of its own workflow at once.
 */
class ThousandTaskStreamsTest {
  private static final int STREAMS = 1_000;

  /** The most threads the server's request pool may have while the streams are open. */
  private static final int MAX_SERVER_THREADS = 200;

  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000");

  private static final Api api = server.api();

  /** One stream as a worker reads it: its id (the first line), then its non-blank lines. */
  private static final class Lines implements Flow.Subscriber<String> {
    final CompletableFuture<String> id = new CompletableFuture<>();
    final LinkedBlockingQueue<JsonNode> lines = new LinkedBlockingQueue<>();

    @Override
    public void onSubscribe(Flow.Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(String line) {
      if (line.isEmpty()) {
        return;
      }
      try {
        JsonNode json = Api.JSON.readTree(line);
        if (!id.isDone()) {
          id.complete(json.get("stream").asText());
        } else {
          lines.add(json);
        }
      } catch (Exception e) {
        id.completeExceptionally(e);
      }
    }

    @Override
    public void onError(Throwable e) {
      id.completeExceptionally(e);
    }

    @Override
    public void onComplete() {}
  }

  private static Lines open(HttpClient client, String wf) throws Exception {
    Lines lines = new Lines();
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(server.url() + "/v1/workflows/" + wf + "/tasks/stream"))
            .header("Authorization", "Bearer local")
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(90))
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    Api.JSON.writeValueAsString(
                        Map.of("versions", List.of(1), "slots", 1, "seconds", 30))))
            .build();
    client
        .sendAsync(req, HttpResponse.BodyHandlers.fromLineSubscriber(lines))
        .whenComplete(
            (res, e) -> {
              if (e != null) {
                lines.id.completeExceptionally(e); // no answer at all: the connection failed
              }
            });
    return lines;
  }

  private static void begin(String wf, Lines s) throws Exception {
    String id = s.id.get(60, TimeUnit.SECONDS);
    assertThat(
            api.send(
                    "POST",
                    "/v1/workflows/" + wf + "/tasks/stream/" + id + "/slots",
                    null,
                    Map.of("Task-Stream-Slots", id + " 1 0 1"))
                .status())
        .isEqualTo(204);
  }

  private static long serverThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("JettyServerThreadPool"))
        .count();
  }

  @Test
  void aThousandOpenStreamsHoldFewThreadsAndAStartReachesAStreamOfItsWorkflow() throws Exception {
    ExecutorService readers = Executors.newFixedThreadPool(4);
    HttpClient client =
        HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(readers).build();
    try {
      // Opened a hundred at a time, each begun by its first slot report, as workers come up.
      List<Lines> many = new ArrayList<>();
      while (many.size() < STREAMS - 1) {
        List<Lines> batch = new ArrayList<>();
        for (int i = 0; i < Math.min(100, STREAMS - 1 - many.size()); i++) {
          batch.add(open(client, "many-streams"));
        }
        for (Lines s : batch) {
          begin("many-streams", s);
        }
        many.addAll(batch);
      }
      Lines other = open(client, "other-stream");
      begin("other-stream", other);

      long threads = serverThreads();
      assertThat(threads)
          .as(
              "the server's request threads with %d streams open (the JVM has %d threads)",
              STREAMS, Thread.activeCount())
          .isPositive()
          .isLessThanOrEqualTo(MAX_SERVER_THREADS);

      long otherRun =
          api.post("/v1/workflows/other-stream/runs", Map.of("input", 1))
              .json()
              .get("runId")
              .asLong();
      JsonNode tasks = other.lines.poll(5, TimeUnit.SECONDS);
      assertThat(tasks).as("the stream of the run's workflow got it at once").isNotNull();
      assertThat(tasks.get("tasks").get(0).get("runId").asLong()).isEqualTo(otherRun);

      long manyRun =
          api.post("/v1/workflows/many-streams/runs", Map.of("input", 1))
              .json()
              .get("runId")
              .asLong();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      JsonNode got = null;
      while (got == null && System.nanoTime() < deadline) {
        for (Lines s : many) {
          JsonNode line = s.lines.poll();
          if (line != null) {
            assertThat(got).as("one stream only got the run").isNull();
            got = line;
          }
        }
        Thread.sleep(5);
      }
      assertThat(got).as("a stream of the workflow got the run at once").isNotNull();
      assertThat(got.get("tasks").get(0).get("runId").asLong()).isEqualTo(manyRun);
      assertThat(serverThreads()).isLessThanOrEqualTo(MAX_SERVER_THREADS);

      for (Lines s : many) {
        api.delete("/v1/workflows/many-streams/tasks/stream/" + s.id.get());
      }
      api.delete("/v1/workflows/other-stream/tasks/stream/" + other.id.get());
    } finally {
      readers.shutdownNow();
    }
  }
}
