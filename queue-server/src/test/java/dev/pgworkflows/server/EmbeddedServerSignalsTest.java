package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server as a user runs it (its own JVM, embedded PostgreSQL in a data directory) under real
 * signals. SIGTERM: waits and task streams end with their usual answer, a request in flight
 * finishes, and PostgreSQL stops last, cleanly. SIGKILL leaves PostgreSQL running; the next server
 * on that directory stops it and starts afresh, losing nothing acknowledged.
 */
class EmbeddedServerSignalsTest {
  private static final Duration READY = Duration.ofSeconds(90);

  @Test
  void sigtermAnswersWaitsFinishesRequestsInFlightAndStopsPostgresLast(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("data");
    int port = ServerProcess.freePort();
    int pgPort = ServerProcess.freePort();
    try (ServerProcess server = ServerProcess.start(data, port, pgPort, dir.resolve("1.log"))) {
      server.awaitReady(READY);
      Api api = server.api();
      assertThat(api.put("/v1/queues/jobs", null).status()).isEqualTo(201);

      CompletableFuture<Api.Response> poll =
          CompletableFuture.supplyAsync(
              () -> api.post("/v1/queues/jobs/messages/receive", Map.of("waitSeconds", 30)));
      api.awaitWaitingPolls(1);
      TaskStreamLines stream = TaskStreamLines.open(server.url(), "stopping");
      // A send in flight: its headers are in, and its body comes slowly, a byte every 50 ms, from
      // before the signal until the stop is under way.
      byte[] body =
          ("{\"body\":{\"sent\":\"while the server stops\",\"pad\":\"" + "x".repeat(400) + "\"}}")
              .getBytes(StandardCharsets.US_ASCII);
      try (Socket send = new Socket("localhost", port)) {
        send.setSoTimeout(30_000);
        OutputStream out = send.getOutputStream();
        out.write(
            ("POST /v1/queues/jobs/messages HTTP/1.1\r\nHost: localhost\r\n"
                    + "Authorization: Bearer token\r\nContent-Type: application/json\r\n"
                    + "Content-Length: "
                    + body.length
                    + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        int at = trickle(out, body, 0, 6); // the server has the request in hand

        long signalled = System.nanoTime();
        server.sigterm();
        // The stop answers the waiting poll, then stops the HTTP server: 200 ms into that.
        while (!poll.isDone() && at < body.length - 10) {
          at = trickle(out, body, at, 1);
        }
        at = trickle(out, body, at, 4);
        out.write(body, at, body.length - at);
        out.flush();
        String status =
            new BufferedReader(
                    new InputStreamReader(send.getInputStream(), StandardCharsets.US_ASCII))
                .readLine();
        assertThat(status).as("the send in flight").startsWith("HTTP/1.1 201");

        // The waiting poll got its usual answer, nothing, at once rather than after 30 s.
        Api.Response answered = poll.get(15, TimeUnit.SECONDS);
        assertThat(answered.status()).isEqualTo(200);
        assertThat(answered.json().get("messages")).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - signalled))
            .isLessThan(Duration.ofSeconds(15));
        // The stream ended as a stream ends, not broken off.
        assertThat(stream.rest().get(15, TimeUnit.SECONDS)).allMatch(String::isBlank);
      }

      assertThat(server.awaitExit(Duration.ofSeconds(30))).isEqualTo(143); // 128 + SIGTERM
      assertThat(server.postmaster()).isEmpty();
      assertThat(data.resolve("postgres").resolve("postmaster.pid")).doesNotExist();
      String log = server.log();
      // A connection that carries no bytes for a quarter of a second while the server stops is
      // closed by design (WebServer's shutdown idle timeout), and Jetty says so with the
      // TimeoutException's name: on a busy machine the trickled body or a kept-alive connection
      // can meet it. Any other exception is a fault.
      String withoutIdleCloses =
          log.lines()
              .filter(l -> !l.contains("TimeoutException: Idle timeout expired"))
              .collect(java.util.stream.Collectors.joining("\n"));
      assertThat(log)
          .doesNotContain("terminating connection due to administrator command")
          .doesNotContain("LISTEN connection lost")
          .doesNotContain("Response does not exist");
      assertThat(withoutIdleCloses).doesNotContain("Exception");
      assertThat(log.indexOf("stopping: ")).isNotNegative();
      assertThat(log.indexOf("embedded PostgreSQL stopped"))
          .as("PostgreSQL stops after the server's other parts:\n%s", log)
          .isGreaterThan(log.indexOf("stopping: "));
    }

    // What the send acknowledged while the server stopped is there; PostgreSQL had stopped clean.
    try (ServerProcess again =
        ServerProcess.start(data, ServerProcess.freePort(), pgPort, dir.resolve("2.log"))) {
      again.awaitReady(READY);
      Api.Response got = again.api().post("/v1/queues/jobs/messages/receive", Map.of("max", 10));
      assertThat(got.json().get("messages")).hasSize(1);
      assertThat(got.json().get("messages").get(0).get("body").get("sent").asText())
          .isEqualTo("while the server stops");
      assertThat(again.log()).doesNotContain("left running").doesNotContain("did not stop");
      again.sigterm();
      assertThat(again.awaitExit(Duration.ofSeconds(30))).isEqualTo(143);
    }
  }

  @Test
  void afterSigkillTheNextServerStopsTheLeftPostgresAndStartsAfresh(@TempDir Path dir)
      throws Exception {
    Path data = dir.resolve("data");
    int port = ServerProcess.freePort();
    int pgPort = ServerProcess.freePort();
    ServerProcess server = ServerProcess.start(data, port, pgPort, dir.resolve("0.log"));
    try {
      server.awaitReady(READY);
      assertThat(server.api().put("/v1/queues/kept", null).status()).isEqualTo(201);
      for (int kill = 1; kill <= 2; kill++) {
        assertThat(
                server
                    .api()
                    .post("/v1/queues/kept/messages", Map.of("body", Map.of("kill", kill)))
                    .status())
            .isEqualTo(201);
        ProcessHandle left = server.postmaster().orElseThrow();
        server.sigkill();
        assertThat(left.isAlive()).as("SIGKILL leaves the embedded PostgreSQL running").isTrue();

        server = ServerProcess.start(data, port, pgPort, dir.resolve(kill + ".log"));
        server.awaitReady(READY);
        assertThat(server.log())
            .contains("embedded PostgreSQL (pid " + left.pid() + ") was left running")
            .contains("stopping it and starting afresh");
        assertThat(left.isAlive()).isFalse();
        assertThat(server.postmaster().orElseThrow().pid()).isNotEqualTo(left.pid());
        Api.Response ready = server.api().withToken(null).get("/readyz");
        assertThat(ready.json().get("durability").get("fsync").asText()).isEqualTo("on");
        Api.Response got = server.api().post("/v1/queues/kept/messages/receive", Map.of("max", 10));
        assertThat(got.json().get("messages")).hasSize(1);
        assertThat(got.json().get("messages").get(0).get("body").get("kill").asInt())
            .isEqualTo(kill);
        long id = got.json().get("messages").get(0).get("id").asLong();
        assertThat(server.api().delete("/v1/queues/kept/messages/" + id).status()).isEqualTo(204);
      }
      server.sigterm();
      assertThat(server.awaitExit(Duration.ofSeconds(30))).isEqualTo(143);
      assertThat(server.postmaster()).isEmpty();
    } finally {
      server.close();
    }
  }

  /** Writes {@code n} more bytes of {@code body} from {@code at}, one every 50 ms. */
  private static int trickle(OutputStream out, byte[] body, int at, int n) throws Exception {
    for (int i = 0; i < n; i++) {
      Thread.sleep(50);
      out.write(body[at++]);
      out.flush();
    }
    return at;
  }

  /**
   * A task stream's lines: the first (its id) read at once, the rest as they come until it ends.
   */
  private record TaskStreamLines(CompletableFuture<List<String>> rest) {
    private static final HttpClient CLIENT =
        HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    static TaskStreamLines open(String url, String workflow) throws Exception {
      HttpRequest req =
          HttpRequest.newBuilder(URI.create(url + "/v1/workflows/" + workflow + "/tasks/stream"))
              .header("Authorization", "Bearer token")
              .header("Content-Type", "application/json")
              .POST(
                  HttpRequest.BodyPublishers.ofString(
                      "{\"versions\":[1],\"slots\":4,\"seconds\":30,\"leaseSeconds\":30}"))
              .build();
      HttpResponse<InputStream> resp = CLIENT.send(req, HttpResponse.BodyHandlers.ofInputStream());
      assertThat(resp.statusCode()).isEqualTo(200);
      BufferedReader in =
          new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8));
      assertThat(in.readLine()).contains("\"stream\"");
      return new TaskStreamLines(
          CompletableFuture.supplyAsync(
              () -> {
                List<String> lines = new ArrayList<>();
                try (in) {
                  for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  throw new UncheckedIOException("the task stream broke off", e);
                }
                return lines;
              }));
    }
  }
}
