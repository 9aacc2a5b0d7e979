package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET /v1/workers} over real HTTP with two servers on one database: a worker that streams
 * from one server and a worker that polls the other are listed by both, with their versions and
 * slots; a stream that stays open keeps its worker listed, a worker that stops polling leaves after
 * the expiry, and one that ends its stream as it closes leaves at once.
 */
class WorkersListingTest {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final ExecutorService READERS = Executors.newCachedThreadPool();
  private static final String EXPIRY_MS = "3000";

  @RegisterExtension
  static final ServerOnFreshDatabase first =
      ServerOnFreshDatabase.with("WORKFLOWS_WORKER_EXPIRY_MS", EXPIRY_MS);

  private static TestServer second;
  private static Api one;
  private static Api two;

  @BeforeAll
  static void secondServer() {
    second = TestServer.start(first.database(), Map.of("WORKFLOWS_WORKER_EXPIRY_MS", EXPIRY_MS));
    one = first.api();
    two = second.api();
  }

  @AfterAll
  static void stop() {
    READERS.shutdownNow();
    if (second != null) {
      second.close();
    }
  }

  /** Opens a task stream with these worker headers; returns its id once the first line came. */
  private static String openStream(
      String url, String workflow, Map<String, String> headers, int slots, int seconds)
      throws Exception {
    String body =
        Api.JSON.writeValueAsString(
            Map.of("versions", List.of(1, 2), "slots", slots, "seconds", seconds));
    HttpRequest.Builder req =
        HttpRequest.newBuilder(URI.create(url + "/v1/workflows/" + workflow + "/tasks/stream"))
            .header("Authorization", "Bearer local")
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(req::header);
    HttpResponse<Stream<String>> resp =
        CLIENT.send(req.build(), HttpResponse.BodyHandlers.ofLines());
    assertThat(resp.statusCode()).isEqualTo(200);
    Iterator<String> it = resp.body().iterator();
    String id = Api.JSON.readTree(it.next()).get("stream").asText();
    CompletableFuture.runAsync(() -> it.forEachRemaining(line -> {}), READERS);
    return id;
  }

  private static Api.Response poll(Api api, String workflow, Map<String, String> headers) {
    return api.send(
        "POST",
        "/v1/workflows/" + workflow + "/tasks/poll",
        Map.of("versions", List.of(3), "waitSeconds", 0),
        headers);
  }

  private static JsonNode workers(Api api, String workflow) {
    Api.Response r = api.get("/v1/workers?workflow=" + workflow);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().get("workers");
  }

  private static JsonNode worker(JsonNode workers, String id) {
    for (JsonNode w : workers) {
      if (w.get("id").asText().equals(id)) {
        return w;
      }
    }
    return null;
  }

  /** Waits until the listing of {@code workflow} on {@code api} satisfies {@code check}. */
  private static JsonNode await(Api api, String workflow, Predicate<JsonNode> check)
      throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    JsonNode ws = workers(api, workflow);
    while (!check.test(ws)) {
      assertThat(System.nanoTime()).as("listing %s", ws).isLessThan(until);
      Thread.sleep(50);
      ws = workers(api, workflow);
    }
    return ws;
  }

  @Test
  void aStreamingWorkerAndAPollingWorkerAreListedByBothServers() throws Exception {
    String stream =
        openStream(
            first.url(),
            "listed",
            Map.of("X-Worker-Id", "streamer-1", "X-Worker-Host", "host-a"),
            8,
            20);
    Api.Response polled =
        poll(
            two,
            "listed",
            Map.of("X-Worker-Id", "poller-1", "X-Worker-Host", "host-b", "X-Worker-Slots", "4"));
    assertThat(polled.status()).as(polled.body()).isEqualTo(200);

    for (Api api : List.of(one, two)) {
      JsonNode ws =
          await(
              api, "listed", l -> worker(l, "streamer-1") != null && worker(l, "poller-1") != null);
      JsonNode s = worker(ws, "streamer-1");
      assertThat(s.get("workflow").asText()).isEqualTo("listed");
      assertThat(s.get("host").asText()).isEqualTo("host-a");
      assertThat(s.get("versions")).extracting(JsonNode::asText).containsExactly("1", "2");
      assertThat(s.get("slots").asInt()).isEqualTo(8);
      assertThat(s.get("mode").asText()).isEqualTo("stream");
      assertThat(s.get("server").asText()).endsWith(":" + first.server().port());
      JsonNode p = worker(ws, "poller-1");
      assertThat(p.get("host").asText()).isEqualTo("host-b");
      assertThat(p.get("versions")).extracting(JsonNode::asText).containsExactly("3");
      assertThat(p.get("slots").asInt()).isEqualTo(4);
      assertThat(p.get("mode").asText()).isEqualTo("poll");
      assertThat(p.get("server").asText()).endsWith(":" + second.server().port());
      assertThat(Instant.parse(p.get("lastSeen").asText())).isAfter(Instant.now().minusSeconds(10));
    }

    // The poller stops; the stream stays open past the expiry and keeps its worker listed.
    JsonNode later = await(two, "listed", l -> worker(l, "poller-1") == null);
    assertThat(worker(later, "streamer-1")).isNotNull();

    // A worker that ends its stream as it closes leaves at once, not after the expiry.
    Api.Response ended =
        one.send(
            "DELETE",
            "/v1/workflows/listed/tasks/stream/" + stream,
            null,
            Map.of("X-Worker-Id", "streamer-1"));
    assertThat(ended.status()).as(ended.body()).isEqualTo(204);
    long goneBy = System.nanoTime();
    await(two, "listed", l -> worker(l, "streamer-1") == null);
    assertThat(Duration.ofNanos(System.nanoTime() - goneBy)).isLessThan(Duration.ofMillis(2500));
  }

  @Test
  void aWorkerWithoutHeadersIsKnownByItsAddressAndTheListingFilters() throws Exception {
    assertThat(poll(one, "anonymous", Map.of()).status()).isEqualTo(200);
    JsonNode ws = await(one, "anonymous", l -> l.size() == 1);
    assertThat(ws.get(0).get("id").asText()).isNotBlank();
    assertThat(ws.get(0).get("host").asText()).isEqualTo(ws.get(0).get("id").asText());
    assertThat(ws.get(0).get("slots").isNull()).isTrue();

    Api.Response all = two.get("/v1/workers");
    assertThat(all.status()).isEqualTo(200);
    assertThat(all.json().get("workers").findValuesAsText("workflow")).contains("anonymous");
    assertThat(workers(two, "nobody-here")).isEmpty();
  }

  @Test
  void badWorkerHeadersAndFiltersAreRefusedAndChangeNothing() throws Exception {
    Api.Response badId = poll(one, "refused", Map.of("X-Worker-Id", "x".repeat(201)));
    assertThat(badId.status()).isEqualTo(400);
    assertThat(badId.json().get("field").asText()).isEqualTo("X-Worker-Id");
    Api.Response badSlots = poll(one, "refused", Map.of("X-Worker-Slots", "many"));
    assertThat(badSlots.status()).isEqualTo(400);
    assertThat(badSlots.json().get("field").asText()).isEqualTo("X-Worker-Slots");
    Api.Response badFilter = one.get("/v1/workers?workflow=Not%20A%20Name");
    assertThat(badFilter.status()).isEqualTo(400);
    assertThat(badFilter.json().get("field").asText()).isEqualTo("workflow");

    // A good poll after them is listed alone: the refused ones left nothing behind.
    assertThat(poll(one, "refused", Map.of("X-Worker-Id", "good")).status()).isEqualTo(200);
    JsonNode ws = await(one, "refused", l -> l.size() >= 1);
    Thread.sleep(1000);
    ws = workers(one, "refused");
    assertThat(ws.findValuesAsText("id")).containsExactly("good");
  }
}
