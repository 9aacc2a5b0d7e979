package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Long polls wake on sends, on delayed messages coming due, across servers, and after the LISTEN
 * connection is killed. Bounds are generous: these prove wake-ups happen, the benchmark times them.
 */
class LongPollTest {
  // A slow fallback poll, so a pass here is owed to NOTIFY or a timer, not to polling.
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000");

  private static final Api api = server.api();

  private static CompletableFuture<Api.Response> waitingReceive(
      Api client, String queue, int seconds) {
    return waitingReceive(client, queue, Map.of("waitSeconds", seconds));
  }

  private static CompletableFuture<Api.Response> waitingReceive(
      Api client, String queue, Map<String, Object> body) {
    return CompletableFuture.supplyAsync(
        () -> client.post("/v1/queues/" + queue + "/messages/receive", body));
  }

  /** A receive that waits up to 20 s; the message it got, and how long it took. */
  private record Timed(Api.Response response, long tookMs) {}

  private static Timed receiveWaiting(String queue) {
    long start = System.nanoTime();
    Api.Response r =
        api.post("/v1/queues/" + queue + "/messages/receive", Map.of("waitSeconds", 20));
    return new Timed(r, (System.nanoTime() - start) / 1_000_000);
  }

  private static void settle() throws InterruptedException {
    Thread.sleep(300); // let the poll reach the server and register
  }

  @Test
  void aWaitingPollWakesPromptlyAfterASend() throws Exception {
    api.put("/v1/queues/lp1", null);
    CompletableFuture<Api.Response> poll = waitingReceive(api, "lp1", 20);
    settle();
    long sentAt = System.nanoTime();
    api.post("/v1/queues/lp1/messages", Map.of("body", "hi"));
    Api.Response r = poll.get();
    long tookMs = (System.nanoTime() - sentAt) / 1_000_000;
    assertThat(r.json().get("messages")).hasSize(1);
    assertThat(tookMs).isLessThan(5_000);
  }

  @Test
  void aPollWithNothingToReceiveReturnsEmptyAtItsWait() {
    api.put("/v1/queues/lp2", null);
    long start = System.nanoTime();
    Api.Response r = api.post("/v1/queues/lp2/messages/receive", Map.of("waitSeconds", 1));
    long tookMs = (System.nanoTime() - start) / 1_000_000;
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("messages")).isEmpty();
    assertThat(tookMs).isBetween(900L, 10_000L);
  }

  @Test
  void aDelayedMessageWakesItsWaiterWhenDue() throws Exception {
    api.put("/v1/queues/lp3", null);
    api.post("/v1/queues/lp3/messages", Map.of("body", "later", "delaySeconds", 2));
    Timed r = receiveWaiting("lp3");
    assertThat(r.response().json().get("messages")).hasSize(1);
    assertThat(r.tookMs()).isBetween(1_000L, 10_000L);
  }

  @Test
  void twoServersOnOneDatabaseWakeEachOthersWaiters() throws Exception {
    try (TestServer other =
        TestServer.start(server.database(), Map.of("WORKFLOWS_FALLBACK_POLL_MS", "600000"))) {
      api.put("/v1/queues/lp4", null);
      CompletableFuture<Api.Response> poll = waitingReceive(api, "lp4", 20);
      settle();
      other.api().post("/v1/queues/lp4/messages", Map.of("body", "from the other server"));
      Api.Response r = poll.get();
      assertThat(r.json().get("messages")).hasSize(1);
      assertThat(r.json().get("messages").get(0).get("body").asText())
          .isEqualTo("from the other server");
    }
  }

  @Test
  void aMessageWhoseLeaseRunsOutWakesAWaitingPoll() throws Exception {
    api.put("/v1/queues/lp10", null);
    api.post("/v1/queues/lp10/messages", Map.of("body", "again"));
    Api.Response first =
        api.post("/v1/queues/lp10/messages/receive", Map.of("visibilityTimeoutSeconds", 1));
    assertThat(first.json().get("messages")).hasSize(1);
    Timed r = receiveWaiting("lp10");
    assertThat(r.response().json().get("messages")).hasSize(1);
    assertThat(r.tookMs()).isBetween(200L, 10_000L);
  }

  @Test
  void aPollDoesNotSpinOnVisibleMessagesItDoesNotMatch() throws Exception {
    api.put("/v1/queues/lp9", null);
    api.post("/v1/queues/lp9/messages", Map.of("body", Map.of("kind", "other")));
    long before = indexScans("q_lp9");
    Api.Response r =
        api.post(
            "/v1/queues/lp9/messages/receive",
            Map.of("waitSeconds", 3, "match", Map.of("kind", "mine")));
    assertThat(r.json().get("messages")).isEmpty();
    Thread.sleep(1_200); // statistics reach the view within a second
    assertThat(indexScans("q_lp9") - before).as("index scans while waiting").isLessThan(50);
  }

  @Test
  void aWorkerPollDoesNotSpinOnRunsOfAnotherVersion() throws Exception {
    assertThat(api.post("/v1/workflows/lpv/runs", Map.of("version", 1, "input", 1)).status())
        .isEqualTo(201);
    long before = indexScans("q___wf_lpv");
    Api.Response r =
        api.post("/v1/workflows/lpv/tasks/poll", Map.of("versions", List.of(2), "waitSeconds", 3));
    assertThat(r.json().get("tasks")).isEmpty();
    Thread.sleep(1_200);
    assertThat(indexScans("q___wf_lpv") - before).as("index scans while waiting").isLessThan(50);
    // The run is still there for a worker of its version.
    Api.Response mine =
        api.post("/v1/workflows/lpv/tasks/poll", Map.of("versions", List.of(1), "waitSeconds", 3));
    assertThat(mine.json().get("tasks")).hasSize(1);
  }

  @Test
  void aWakeUpThePollWaitingLongestCannotUseReachesOneThatCan() throws Exception {
    api.put("/v1/queues/lp11", null);
    CompletableFuture<Api.Response> wantsA =
        waitingReceive(api, "lp11", Map.of("waitSeconds", 10, "match", Map.of("kind", "a")));
    settle();
    CompletableFuture<Api.Response> wantsB =
        waitingReceive(api, "lp11", Map.of("waitSeconds", 10, "match", Map.of("kind", "b")));
    settle();
    long sentAt = System.nanoTime();
    api.post("/v1/queues/lp11/messages", Map.of("body", Map.of("kind", "b")));
    Api.Response b = wantsB.get();
    assertThat(b.json().get("messages")).hasSize(1);
    assertThat((System.nanoTime() - sentAt) / 1_000_000).isLessThan(5_000);
    assertThat(wantsA.get().json().get("messages")).isEmpty();
  }

  private static long indexScans(String table) throws Exception {
    try (Connection c = server.database().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) FROM pg_stat_user_tables"
                    + " WHERE schemaname = 'queue' AND relname = '"
                    + table
                    + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void aSendStillWakesAWaiterAfterTheListenConnectionWasKilled() throws Exception {
    api.put("/v1/queues/lp5", null);
    try (Connection c = server.database().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE application_name = 'pgworkflows-listener' AND datname = current_database()")) {
      rs.next();
      assertThat(rs.getInt(1)).isGreaterThanOrEqualTo(1);
    }
    Thread.sleep(1_500); // reconnect backoff starts at 100 ms
    CompletableFuture<Api.Response> poll = waitingReceive(api, "lp5", 20);
    settle();
    long sentAt = System.nanoTime();
    api.post("/v1/queues/lp5/messages", Map.of("body", "after the outage"));
    Api.Response r = poll.get();
    assertThat(r.json().get("messages")).hasSize(1);
    assertThat((System.nanoTime() - sentAt) / 1_000_000).isLessThan(5_000);
  }

  @Test
  void manyWaitersShareABurst() throws Exception {
    api.put("/v1/queues/lp6", null);
    java.util.List<CompletableFuture<Api.Response>> polls = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      polls.add(waitingReceive(api, "lp6", 20));
    }
    settle();
    api.post(
        "/v1/queues/lp6/messages",
        Map.of(
            "messages",
            java.util.List.of(
                Map.of("body", 1),
                Map.of("body", 2),
                Map.of("body", 3),
                Map.of("body", 4),
                Map.of("body", 5))));
    int total = 0;
    for (CompletableFuture<Api.Response> p : polls) {
      total += p.get().json().get("messages").size();
    }
    assertThat(total).isEqualTo(5);
  }
}
