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
 * A schedule's tick is agreed in SQL: the due query hands a schedule to one transaction at a time
 * (the others skip it), and a fire whose tick is no longer the schedule's next starts nothing, so
 * servers that computed the same tick start one run for it.
 */
class ScheduleFireTest {
  private static final String MAKE =
      "SELECT name FROM queue.schedule_create('hourly', 'hourly', '0 * * * *', 'UTC',"
          + " '{\"to\": \"ops\"}', 'all', 100, '2026-03-02 11:00Z')";

  private static String fire(Connection c, String due, String ticks, String next)
      throws SQLException {
    return String.join(
        ",",
        rows(
            c,
            "SELECT run_id || ':' || created FROM queue.schedule_fire('hourly', '"
                + due
                + "', '"
                + ticks
                + "', '"
                + next
                + "')"));
  }

  @Test
  void aTickIsStartedOnceWhoeverFiresItAndItsInputCarriesTheTick() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, MAKE);
      String first = fire(c, "2026-03-02 11:00Z", "{2026-03-02 11:00Z}", "2026-03-02 12:00Z");
      assertThat(first).endsWith(":true");
      // A second server that read the same next tick: the schedule has moved on, nothing starts.
      assertThat(fire(c, "2026-03-02 11:00Z", "{2026-03-02 11:00Z}", "2026-03-02 12:00Z"))
          .isEmpty();
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("1");
      assertThat(query(c, "SELECT input::text || ' ' || idempotency_key FROM queue.workflow_run"))
          .isEqualTo(
              "{\"to\": \"ops\", \"scheduledAt\": \"2026-03-02T11:00:00Z\"}"
                  + " __schedule/hourly/2026-03-02T11:00:00Z");
      assertThat(
              query(
                  c,
                  "SELECT next_tick AT TIME ZONE 'UTC' || ' ' || (last_tick AT TIME ZONE 'UTC')"
                      + " FROM queue.schedule"))
          .isEqualTo("2026-03-02 12:00:00 2026-03-02 11:00:00");
    }
  }

  @Test
  void ticksOutOfOrderOrOutsideTheWindowAreRefusedAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, MAKE);
      for (String ticks :
          new String[] {
            "{2026-03-02 10:00Z}", // before the due tick
            "{2026-03-02 13:00Z}", // at or after the next
            "{2026-03-02 12:00Z,2026-03-02 11:00Z}", // out of order
            "{2026-03-02 11:00:00.5Z}" // not a whole second
          }) {
        assertThatThrownBy(() -> fire(c, "2026-03-02 11:00Z", ticks, "2026-03-02 13:00Z"))
            .as(ticks)
            .isInstanceOf(SQLException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      }
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("0");
      assertThat(query(c, "SELECT next_tick AT TIME ZONE 'UTC' FROM queue.schedule"))
          .isEqualTo("2026-03-02 11:00:00");
    }
  }

  @Test
  void aDueScheduleHeldByOneTransactionIsSkippedByAnother() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    try (Connection a = db.connect();
        Connection b = db.connect()) {
      exec(a, MAKE);
      a.setAutoCommit(false);
      b.setAutoCommit(false);
      try {
        assertThat(rows(a, "SELECT name FROM queue.schedule_due('2026-03-02 11:00:30Z')"))
            .containsExactly("hourly");
        assertThat(rows(b, "SELECT name FROM queue.schedule_due('2026-03-02 11:00:30Z')"))
            .isEmpty();
        assertThat(rows(a, "SELECT name FROM queue.schedule_due('2026-03-02 10:59Z')")).isEmpty();
      } finally {
        a.rollback();
        b.rollback();
      }
    }
  }
}
