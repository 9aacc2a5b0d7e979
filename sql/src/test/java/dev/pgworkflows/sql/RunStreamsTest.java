package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.inline;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A run's streams: offsets dense from 0, each write identity stored once, closed streams and ended
 * runs refuse new entries, a restart takes back what the steps it sets aside wrote, and retention
 * takes the entries with the run.
 */
class RunStreamsTest {

  private static String write(Connection c, Held h, String entries, boolean close)
      throws SQLException {
    return write(c, h, "out", entries, close);
  }

  private static String write(Connection c, Held h, String stream, String entries, boolean close)
      throws SQLException {
    return query(
        c,
        "SELECT queue.run_stream_write('s', "
            + h.run()
            + ", '"
            + stream
            + "', '"
            + entries
            + "'::jsonb, "
            + close
            + ")::text");
  }

  private static String offsets(Connection c, Held h) throws SQLException {
    return query(
        c,
        "SELECT string_agg(stream_offset || '=' || writer || '/' || seq || ':' || value::text, ' '"
            + " ORDER BY stream_offset) FROM queue.run_stream_entry WHERE run_id = "
            + h.run());
  }

  @Test
  void repeatedIdentitiesAreSkippedAndNewOnesTakeTheNextOffset() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "s");
      write(
          c,
          h,
          "[{\"writer\":\"a\",\"seq\":0,\"value\":1},{\"writer\":\"a\",\"seq\":1,\"value\":2}]",
          false);
      // A retried attempt writes its first two again, then one more.
      String again =
          write(
              c,
              h,
              "[{\"writer\":\"a\",\"seq\":0,\"value\":10},{\"writer\":\"a\",\"seq\":1,\"value\":20},"
                  + "{\"writer\":\"a\",\"seq\":2,\"value\":30},{\"writer\":\"\",\"seq\":0,\"value\":\"b\"}]",
              false);
      assertThat(again).contains("\"next\": 4").contains("\"written\": 2");
      assertThat(offsets(c, h)).isEqualTo("0=a/0:1 1=a/1:2 2=a/2:30 3=/0:\"b\"");
    }
  }

  @Test
  void aClosedStreamTakesRepeatsButNoNewEntries() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "s");
      write(c, h, "[{\"writer\":\"\",\"seq\":0,\"value\":1}]", true);
      assertThat(write(c, h, "[{\"writer\":\"\",\"seq\":0,\"value\":1}]", true))
          .contains("\"written\": 0")
          .contains("\"closed\": true");
      assertThatThrownBy(() -> write(c, h, "[{\"writer\":\"\",\"seq\":1,\"value\":2}]", false))
          .hasMessageContaining("stream out of run " + h.run() + " is closed");
      assertThat(offsets(c, h)).isEqualTo("0=/0:1");
    }
  }

  @Test
  void anEndedRunRefusesWritesAndRetentionDeletesItsStreams() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "s");
      write(c, h, "[{\"writer\":\"\",\"seq\":0,\"value\":1}]", false);
      complete(c, h, "x", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60");
      assertThat(
              query(c, "SELECT queue.run_stream_read('s', " + h.run() + ", 'out', 0, 10)->>'end'"))
          .isEqualTo("true");
      assertThatThrownBy(() -> write(c, h, "[{\"writer\":\"\",\"seq\":1,\"value\":2}]", false))
          .hasMessageContaining("has ended (completed)");
      exec(c, "UPDATE queue.workflow_run SET retention_days = 1");
      assertThat(query(c, "SELECT queue.sweep_workflow_runs(10, now() + interval '2 days')"))
          .isEqualTo("1");
      assertThat(query(c, "SELECT count(*) FROM queue.run_stream_entry")).isEqualTo("0");
      assertThat(query(c, "SELECT count(*) FROM queue.run_stream")).isEqualTo("0");
    }
  }

  @Test
  void aRestartDeletesWhatTheStepsSetAsideAndTheBodyAfterThemWroteAndReopensTheStream()
      throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "s");
      write(c, h, "[{\"writer\":\"\",\"seq\":0,\"value\":\"body before a\"}]", false);
      assertThat(inline(c, h, "a")).startsWith("ok:");
      // Steps a and b ran side by side (a parallel group): their entries interleave.
      write(c, h, "[{\"writer\":\"b\",\"seq\":0,\"value\":\"b old\"}]", false);
      write(c, h, "[{\"writer\":\"a\",\"seq\":0,\"value\":\"a\"}]", false);
      Held h2 = new Held(h.run(), h.msg(), Long.parseLong(inline(c, h, "b").substring(3)));
      write(c, h, "[{\"writer\":\"\",\"seq\":1,\"value\":\"body after b\"}]", true);
      assertThat(
              complete(
                  c,
                  h2,
                  "c",
                  "NULL",
                  "'{\"status\": \"failed\", \"error\": {\"message\": \"boom\"}}'",
                  "60"))
          .isEqualTo("ok:");

      assertThat(query(c, "SELECT queue.workflow_restart(" + h.run() + ", 'b')")).isEqualTo("2");
      // Step a's entry moved down: offsets stay dense; the stream is open again.
      assertThat(offsets(c, h)).isEqualTo("0=/0:\"body before a\" 1=a/0:\"a\"");
      assertThat(
              query(
                  c,
                  "SELECT next_offset || ':' || (closed_at IS NULL) FROM queue.run_stream"
                      + " WHERE run_id = "
                      + h.run()))
          .isEqualTo("2:true");

      // The restarted step and the body after it write again under the same identities.
      Held again = poll(c, "s");
      assertThat(again.run()).isEqualTo(h.run());
      assertThat(write(c, h, "[{\"writer\":\"b\",\"seq\":0,\"value\":\"b new\"}]", false))
          .contains("\"written\": 1");
      assertThat(write(c, h, "[{\"writer\":\"\",\"seq\":1,\"value\":\"body after b\"}]", true))
          .contains("\"written\": 1")
          .contains("\"closed\": true");
      assertThat(offsets(c, h))
          .isEqualTo("0=/0:\"body before a\" 1=a/0:\"a\" 2=b/0:\"b new\" 3=/1:\"body after b\"");
    }
  }

  @Test
  void anEmptyWriteCreatesNoStreamAndARunHasAtMostAHundredStreams() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "s");
      assertThat(write(c, h, "[]", false)).contains("\"written\": 0");
      assertThat(query(c, "SELECT count(*) FROM queue.run_stream")).isEqualTo("0");
      for (int i = 0; i < 100; i++) {
        write(c, h, "s" + i, "[{\"writer\":\"\",\"seq\":" + i + ",\"value\":1}]", false);
      }
      assertThatThrownBy(() -> write(c, h, "s100", "[]", true))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("has 100 streams, the most a run may have")
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("WF003");
      // A stream it has takes more.
      assertThat(write(c, h, "s0", "[{\"writer\":\"\",\"seq\":100,\"value\":2}]", false))
          .contains("\"written\": 1");
      assertThat(query(c, "SELECT count(*) FROM queue.run_stream")).isEqualTo("100");
    }
  }

  @Test
  void aStreamNameOfDotsAloneIsRefused() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "s");
      for (String name : new String[] {".", "..", "..."}) {
        assertThatThrownBy(
                () -> write(c, h, name, "[{\"writer\":\"\",\"seq\":0,\"value\":1}]", false))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("not dots alone")
            .extracting(e -> ((SQLException) e).getSQLState())
            .isEqualTo("22023");
      }
      assertThat(write(c, h, "a.b", "[{\"writer\":\"\",\"seq\":0,\"value\":1}]", false))
          .contains("\"written\": 1");
    }
  }
}
