package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.WorkflowClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * pg_auto_failover decides, not the test: a server on a multi-host URL ({@code
 * targetServerType=primary}) serves 40 starts a second while the primary's node (its pg_autoctl
 * service and its PostgreSQL) is SIGKILLed. The monitor promotes the standby by itself and the
 * server follows. With the standby synchronous (the formation's default), every acknowledged start
 * is on the new primary and completes once; the killed node then rejoins as a standby, and a
 * switchover ordered through the monitor under the same load loses nothing either. With the standby
 * asynchronous, what a failover loses is counted and printed.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@Tag("reliability")
class AutoFailoverTest {
  private static final long START_EVERY_MS = 25;

  @Test
  void theManagerPromotesTheSynchronousStandbyAndNothingAcknowledgedIsLost() throws Exception {
    try (AutoFailoverCluster pg = AutoFailoverCluster.start();
        Load load = Load.start(pg)) {
      Thread.sleep(5_000);
      String killed = pg.primary();
      long t0 = System.nanoTime();
      pg.killNode(killed);
      String promoted = killed.equals("node1") ? "node2" : "node1";
      pg.awaitStates(Map.of(promoted, "wait_primary"));
      long promotedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      long servedMs = load.awaitAckAfter(System.nanoTime()) - t0;
      Thread.sleep(5_000);
      pg.restartNode(killed);
      pg.awaitStates(Map.of(promoted, "primary", killed, "secondary"));
      Thread.sleep(3_000);
      long s0 = System.nanoTime();
      pg.switchover();
      pg.awaitStates(Map.of(killed, "primary", promoted, "secondary"));
      long switchedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s0);
      Thread.sleep(5_000);
      Load.Outcome o = load.stop();
      System.out.printf(
          "pg_auto_failover, synchronous standby: %s killed, %s promoted by the monitor in %d ms,"
              + " the server's first acknowledged start after the kill at %d ms; switchover back in"
              + " %d ms; %d starts acknowledged, %d refused %s, %d lost%n",
          killed,
          promoted,
          promotedMs,
          TimeUnit.NANOSECONDS.toMillis(servedMs),
          switchedMs,
          o.acked(),
          o.refused(),
          o.refusals(),
          o.lost());
      assertThat(o.lost()).as("acknowledged starts missing after the failover").isZero();
      assertThat(SteadyStarts.onlyRetryable(o.refusals())).as("refused: %s", o.refusals()).isTrue();
      load.assertEachRanOnce();
    }
  }

  @Test
  void withAnAsynchronousStandbyTheLossIsCounted() throws Exception {
    try (AutoFailoverCluster pg = AutoFailoverCluster.start()) {
      pg.asynchronous();
      try (Load load = Load.start(pg)) {
        Thread.sleep(5_000);
        String killed = pg.primary();
        pg.killNode(killed);
        String promoted = killed.equals("node1") ? "node2" : "node1";
        pg.awaitStates(Map.of(promoted, "wait_primary"));
        load.awaitAckAfter(System.nanoTime());
        Thread.sleep(3_000);
        Load.Outcome o = load.stop();
        System.out.printf(
            "pg_auto_failover, asynchronous standby: %d starts acknowledged, %d lost in the"
                + " failover, %d refused %s%n",
            o.acked(), o.lost(), o.refused(), o.refusals());
        assertThat(o.acked()).isGreaterThan(100);
      }
    }
  }

  /** A server on the formation, a worker, and a producer of steady starts. */
  private static final class Load implements AutoCloseable {
    private final TestDatabase db;
    private final TestServer server;
    private final Worker worker;
    private final Map<Long, Integer> acked = new ConcurrentHashMap<>();
    private final Map<String, Integer> refusals = new ConcurrentHashMap<>();
    private final SteadyStarts producer;

    record Outcome(int acked, int lost, int refused, Map<String, Integer> refusals) {}

    private Load(TestDatabase db, TestServer server, Worker worker) {
      this.db = db;
      this.server = server;
      this.worker = worker;
      producer =
          new SteadyStarts(
              "producer",
              WorkflowClient.connect(server.url()),
              START_EVERY_MS,
              new AtomicInteger(),
              acked,
              refusals);
    }

    static Load start(AutoFailoverCluster pg) {
      TestDatabase db = new TestDatabase("postgres", pg.multiHostJdbcUrl(), "postgres", "");
      TestServer server = TestServer.start(db, Map.of());
      Worker worker =
          ScaleOutWorkflow.define()
              .serve(
                  WorkerOptions.url(server.url())
                      .pollWait(Duration.ofSeconds(1))
                      .lease(ScaleOutWorkflow.LEASE)
                      .concurrency(16));
      return new Load(db, server, worker);
    }

    /** Waits (up to two minutes) for a start acknowledged after {@code since}; returns when. */
    long awaitAckAfter(long since) throws InterruptedException {
      long deadline = since + TimeUnit.MINUTES.toNanos(2);
      while (producer.lastAck() <= since) {
        assertThat(System.nanoTime()).as("no start acknowledged since").isLessThan(deadline);
        Thread.sleep(50);
      }
      return producer.lastAck();
    }

    /**
     * Stops the starts; counts the acknowledged ones the database does not have (by id and input: a
     * new primary that lost a run may give its id to another).
     */
    Outcome stop() throws Exception {
      producer.close();
      Map<Long, Integer> all = Map.copyOf(acked);
      Long[] ids = all.keySet().toArray(Long[]::new);
      String[] inputs = new String[ids.length];
      for (int i = 0; i < ids.length; i++) {
        inputs[i] = Integer.toString(all.get(ids[i]));
      }
      int present;
      try (Connection c = db.connect();
          PreparedStatement s =
              c.prepareStatement(
                  "SELECT count(*) FROM queue.workflow_run r"
                      + " JOIN unnest(?::bigint[], ?::text[]) AS a(id, input)"
                      + " ON r.run_id = a.id AND r.input::text = a.input")) {
        s.setArray(1, c.createArrayOf("bigint", ids));
        s.setArray(2, c.createArrayOf("text", inputs));
        try (ResultSet rs = s.executeQuery()) {
          rs.next();
          present = rs.getInt(1);
        }
      }
      int refused = refusals.values().stream().mapToInt(Integer::intValue).sum();
      return new Outcome(ids.length, ids.length - present, refused, Map.copyOf(refusals));
    }

    void assertEachRanOnce() throws Exception {
      PressureCell.awaitAll(db, acked.keySet());
      PressureCell.assertEachRanOnce(db, acked);
    }

    @Override
    public void close() {
      producer.close();
      worker.close();
      server.close();
    }
  }
}
