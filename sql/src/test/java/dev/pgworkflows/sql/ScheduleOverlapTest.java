package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * What a schedule's tick does while its last run still runs (skip, buffer one, buffer all, cancel
 * the other, allow all), a backfill of past ticks under that policy, and a pause after failed runs
 * in a row.
 */
class ScheduleOverlapTest {

  private static void make(Connection c, String overlap, String pauseAfter) throws SQLException {
    exec(
        c,
        "SELECT name FROM queue.schedule_create('job', 'job', '0 * * * *', 'UTC', NULL, 'all', 100,"
            + " '2026-03-02 11:00Z')");
    exec(
        c,
        "SELECT name FROM queue.schedule_set_policy('job', '" + overlap + "', " + pauseAfter + ")");
  }

  /** The outcome of each tick of an hourly backfill from 11:00 for {@code hours} hours. */
  private static String backfill(Connection c, int hours) throws SQLException {
    return String.join(
        ",",
        rows(
            c,
            "SELECT outcome FROM queue.schedule_backfill('job', ARRAY(SELECT"
                + " generate_series('2026-03-01 11:00Z'::timestamptz, '2026-03-01 11:00Z'::timestamptz"
                + " + interval '1 hour' * ("
                + hours
                + " - 1), interval '1 hour')))"));
  }

  private static String running(Connection c) throws SQLException {
    return query(c, "SELECT count(*) FROM queue.workflow_run WHERE status = 'running'");
  }

  /** Ends the schedule's last run with {@code status}. */
  private static void endLast(Connection c, String status) throws SQLException {
    exec(
        c,
        "UPDATE queue.workflow_run SET status = '"
            + status
            + "', completed_at = now(), current_msg_id = NULL"
            + (status.equals("failed") ? ", error = '\"boom\"'" : ", output = '1'")
            + " WHERE run_id = (SELECT last_run_id FROM queue.schedule WHERE name = 'job')");
  }

  @Test
  void skipDropsTicksWhileTheLastRunRuns() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      make(c, "skip", "NULL");
      assertThat(backfill(c, 3)).isEqualTo("started,skipped,skipped");
      endLast(c, "completed");
      assertThat(backfill(c, 4)).isEqualTo("started,started,skipped,skipped");
    }
  }

  @Test
  void bufferAllStartsEachTickInTurnAsTheRunBeforeEnds() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      make(c, "buffer_all", "NULL");
      assertThat(backfill(c, 30)).startsWith("started,buffered,buffered").endsWith("buffered");
      assertThat(running(c)).isEqualTo("1");
      assertThat(rows(c, "SELECT run_id FROM queue.schedule_drain()")).isEmpty();
      for (int i = 2; i <= 30; i++) {
        endLast(c, "completed");
        assertThat(
                rows(
                    c,
                    "SELECT to_char(tick AT TIME ZONE 'UTC', 'HH24') FROM queue.schedule_drain()"))
            .containsExactly(String.format("%02d", (10 + i) % 24));
        assertThat(running(c)).isEqualTo("1");
      }
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("30");
      assertThat(query(c, "SELECT cardinality(buffered) FROM queue.schedule")).isEqualTo("0");
    }
  }

  @Test
  void bufferOneKeepsOneTickAndCancelOtherReplacesTheRunningRun() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      make(c, "buffer_one", "NULL");
      assertThat(backfill(c, 3)).isEqualTo("started,buffered,skipped");
      exec(c, "SELECT name FROM queue.schedule_set_policy('job', 'cancel_other', NULL)");
      exec(c, "UPDATE queue.schedule SET buffered = '{}'");
      String first = query(c, "SELECT last_run_id FROM queue.schedule");
      assertThat(
              rows(c, "SELECT outcome FROM queue.schedule_backfill('job', '{2026-03-01 20:00Z}')"))
          .containsExactly("started");
      assertThat(query(c, "SELECT status::text FROM queue.workflow_run WHERE run_id = " + first))
          .isEqualTo("cancelled");
      assertThat(running(c)).isEqualTo("1");
    }
  }

  @Test
  void allowAllStartsEveryTickAndATickRunTwiceIsOneRun() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      make(c, "allow_all", "NULL");
      assertThat(backfill(c, 30)).doesNotContain("skipped", "buffered");
      assertThat(running(c)).isEqualTo("30");
      assertThat(
              rows(
                  c,
                  "SELECT created::text FROM queue.schedule_backfill('job', '{2026-03-01 11:00Z}')"))
          .containsExactly("false");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("30");
    }
  }

  @Test
  void failedRunsInARowPauseTheScheduleAtItsNextTick() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      make(c, "allow_all", "2");
      String fire =
          "SELECT count(*) FROM queue.schedule_fire('job', (SELECT next_tick FROM queue.schedule),"
              + " ARRAY[(SELECT next_tick FROM queue.schedule)],"
              + " (SELECT next_tick + interval '1 hour' FROM queue.schedule))";
      assertThat(query(c, fire)).isEqualTo("1");
      endLast(c, "failed");
      assertThat(query(c, fire)).isEqualTo("1");
      endLast(c, "completed");
      assertThat(query(c, fire)).isEqualTo("1");
      endLast(c, "failed");
      assertThat(query(c, fire)).isEqualTo("1");
      assertThat(query(c, "SELECT paused::text || failures_in_row FROM queue.schedule"))
          .isEqualTo("false1");
      endLast(c, "failed");
      assertThat(query(c, fire)).isEqualTo("0");
      assertThat(query(c, "SELECT paused::text || failures_in_row FROM queue.schedule"))
          .isEqualTo("true2");
    }
  }

  @Test
  void badPoliciesAndBackfillsAreRefusedAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      make(c, "skip", "3");
      assertThatThrownBy(() -> exec(c, "SELECT queue.schedule_set_policy('job', 'newest', NULL)"))
          .hasMessageContaining("overlap must be");
      assertThatThrownBy(() -> exec(c, "SELECT queue.schedule_set_policy('job', 'skip', 0)"))
          .hasMessageContaining("pauseAfterFailures must be between 1 and 1000");
      assertThatThrownBy(() -> exec(c, "SELECT * FROM queue.schedule_backfill('job', '{}')"))
          .hasMessageContaining("ticks must be between 1 and 1000");
      assertThatThrownBy(
              () ->
                  exec(
                      c,
                      "SELECT * FROM queue.schedule_backfill('job',"
                          + " '{2026-03-01 12:00Z, 2026-03-01 11:00Z}')"))
          .hasMessageContaining("in order");
      assertThatThrownBy(
              () -> exec(c, "SELECT * FROM queue.schedule_backfill('none', '{2026-03-01 12:00Z}')"))
          .hasMessageContaining("does not exist");
      assertThat(query(c, "SELECT overlap || pause_after_failures FROM queue.schedule"))
          .isEqualTo("skip3");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("0");
    }
  }
}
