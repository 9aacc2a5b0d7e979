package dev.pgworkflows.sweeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SweeperTest {

  private static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void sweepsExpiredFinishedRunsInBatchesAndNeverARunningOne() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int i = 0; i < 7; i++) {
        s.execute("SELECT queue.workflow_start('sweep', '{}'::jsonb, 1, NULL, 1)");
      }
      // Five finished long ago (two of them with a long retention), one finished just now,
      // one still running though it started a year ago.
      s.execute(
          "UPDATE queue.workflow_run SET status = 'completed', current_msg_id = NULL,"
              + " completed_at = now() - interval '3 days' WHERE run_id <= 5");
      s.execute("UPDATE queue.workflow_run SET retention_days = 30 WHERE run_id IN (4, 5)");
      s.execute(
          "UPDATE queue.workflow_run SET status = 'failed', error = '{}', current_msg_id = NULL,"
              + " completed_at = now() WHERE run_id = 6");
      s.execute(
          "UPDATE queue.workflow_run SET started_at = now() - interval '1 year' WHERE run_id = 7");
      s.execute(
          "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, started_at)"
              + " SELECT run_id, 'a', 1, 'run', now() FROM queue.workflow_run");

      AtomicLong swept = new AtomicLong();
      Sweeper sweeper =
          new Sweeper(
              db.dataSource(),
              SweeperConfig.defaults().withBatchSize(2),
              r -> swept.addAndGet(r.runs()));
      Sweeper.Swept result = sweeper.sweepOnce(Instant.now());
      assertThat(result.runs()).isEqualTo(3);
      assertThat(swept.get()).isEqualTo(3);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo(4);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run WHERE run_id = 7")).isEqualTo(1);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo(4);

      // A year later everything finished is gone, and the running run still is not.
      assertThat(sweeper.sweepOnce(Instant.now().plus(Duration.ofDays(400))).runs()).isEqualTo(3);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo(1);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run WHERE status = 'running'"))
          .isEqualTo(1);
      // Their journals went with them.
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_step")).isEqualTo(1);
    }
  }

  @Test
  void trimsFinishedDeliveriesAndOldDeadLettersAndRunsOnSchedule() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("SELECT queue.create_queue('dlq', false, 0, 1)");
      s.execute("SELECT queue.send('dlq', '1')");
      s.execute("SELECT * FROM queue.receive('dlq')");
      s.execute("SELECT * FROM queue.receive('dlq')");
      assertThat(count(c, "SELECT count(*) FROM queue.dead_letter")).isEqualTo(1);
      s.execute("SELECT * FROM queue.subscribe('t', 'http', 'http://localhost:1/x')");
      s.execute("SELECT * FROM queue.publish('t', '{}')");
      s.execute("SELECT * FROM queue.publish('t', '{}')");
      s.execute(
          "UPDATE queue.outbox SET status = 'delivered', finished_at = now() - interval '8 days'"
              + " WHERE delivery_id = 1");
      s.execute("UPDATE queue.dead_letter SET dead_at = now() - interval '15 days'");

      Sweeper sweeper =
          new Sweeper(
              db.dataSource(),
              SweeperConfig.defaults().withInterval(Duration.ofMillis(20)),
              r -> {});
      ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
      try {
        sweeper.start(scheduler);
        sweeper.awaitPass(10_000);
      } finally {
        sweeper.close();
        scheduler.shutdownNow();
      }
      assertThat(count(c, "SELECT count(*) FROM queue.outbox")).isEqualTo(1);
      assertThat(count(c, "SELECT count(*) FROM queue.outbox WHERE status = 'pending'"))
          .isEqualTo(1);
      assertThat(count(c, "SELECT count(*) FROM queue.dead_letter")).isZero();
    }
  }
}
