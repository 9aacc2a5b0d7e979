package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A step's state changes are journaled with its row, exactly once, by every completion path (lone
 * inline, general, run-ending, batch, parallel steps); workflow_state folds them in seq order;
 * changes that break a limit raise 22023 naming the field and write nothing; the journal handed to
 * workers carries a row's changes only where it has some.
 */
class RunStateTest {

  /** "outcome" of a lone workflow_complete_step journaling {@code step} with {@code state}. */
  private static String complete(Connection c, Held h, String step, String next, String state)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT outcome FROM queue.workflow_complete_step(?, ?, ?, ?, 'run', '1'::jsonb, NULL,"
                + " NULL, ?::jsonb, NULL, 60, ?::jsonb)")) {
      ps.setLong(1, h.run());
      ps.setLong(2, h.msg());
      ps.setLong(3, h.receipt());
      ps.setString(4, step);
      ps.setString(5, next);
      ps.setString(6, state);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  private static String inline(Connection c, Held h, String step, String state)
      throws SQLException {
    return complete(c, h, step, "{\"inline\": true}", state);
  }

  private static String state(Connection c, Held h) throws SQLException {
    return String.join(
        ",",
        rows(
            c,
            "SELECT key || '=' || value::text || '@' || version FROM queue.workflow_state("
                + h.run()
                + ")"));
  }

  @Test
  void theStateIsTheFoldOfTheRowsChangesAndEachIsJournaledOnce() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "st");
      assertThat(inline(c, h, "a", "{\"p\": 1, \"phase\": \"x\"}")).isEqualTo("ok");
      assertThat(inline(c, h, "plain", null)).isEqualTo("ok");
      assertThat(inline(c, h, "b", "{\"p\": 2, \"phase\": null}")).isEqualTo("ok");
      assertThat(state(c, h)).isEqualTo("p=2@2");
      // A repeat of a journaled step changes nothing, its state neither.
      assertThat(inline(c, h, "b", "{\"p\": 99}")).isEqualTo("duplicate");
      assertThat(state(c, h)).isEqualTo("p=2@2");

      String journal = query(c, "SELECT queue.workflow_journal(" + h.run() + ")::text");
      assertThat(journal).contains("\"state\": {\"p\": 1, \"phase\": \"x\"}");
      assertThat(
              query(
                  c,
                  "SELECT count(*) FROM jsonb_array_elements(queue.workflow_journal("
                      + h.run()
                      + ")) e WHERE e ? 'state'"))
          .isEqualTo("2");

      // The run's end journals its last step's changes in the same transaction.
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT outcome FROM queue.workflow_complete_ended(?, ?, ?, 'c', 'run', '1'::jsonb,"
                  + " NULL, NULL, '{\"status\": \"completed\", \"output\": 1}'::jsonb, 60,"
                  + " '{\"done\": true}'::jsonb)")) {
        ps.setLong(1, h.run());
        ps.setLong(2, h.msg());
        ps.setLong(3, h.receipt());
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).isEqualTo("ok");
        }
      }
      // Versions only grow; they may skip (the duplicate above drew one it did not keep).
      assertThat(state(c, h)).isEqualTo("done=true@4,p=2@2");
    }
  }

  @Test
  void aBatchAndParallelStepsJournalTheirItemsChanges() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held one = startAndPoll(c, "stb");
      Held two = startAndPoll(c, "stb");
      String items =
          "[{\"run_id\": "
              + one.run()
              + ", \"msg_id\": "
              + one.msg()
              + ", \"receipt\": "
              + one.receipt()
              + ", \"step_name\": \"a\", \"step_kind\": \"run\", \"output\": 1,"
              + " \"next\": {\"inline\": true}, \"state\": {\"k\": \"one\"}},"
              + " {\"run_id\": "
              + two.run()
              + ", \"msg_id\": "
              + two.msg()
              + ", \"receipt\": "
              + two.receipt()
              + ", \"step_name\": \"a\", \"step_kind\": \"run\", \"output\": 1,"
              + " \"next\": {\"inline\": true}}]";
      assertThat(
              rows(
                  c,
                  "SELECT outcome FROM queue.workflow_complete_batch('stb', '"
                      + items
                      + "'::jsonb)"))
          .containsExactly("ok", "ok");
      assertThat(state(c, one)).isEqualTo("k=\"one\"@1");
      assertThat(state(c, two)).isEmpty();

      assertThat(
              query(
                  c,
                  "SELECT outcome || ':' || journaled FROM queue.workflow_journal_steps("
                      + two.run()
                      + ", "
                      + two.msg()
                      + ", "
                      + two.receipt()
                      + ", '[{\"name\": \"p\", \"kind\": \"run\", \"output\": 1,"
                      + " \"state\": {\"k\": \"two\"}}]'::jsonb)"))
          .isEqualTo("ok:1");
      assertThat(state(c, two)).isEqualTo("k=\"two\"@2");

      // An item whose changes break a limit fails the batch as a whole (the server then takes
      // the items one by one): nothing is written.
      String bad = items.replace("{\"k\": \"one\"}", "{\"bad key\": 1}").replace("\"a\"", "\"b\"");
      assertThatThrownBy(
              () ->
                  rows(
                      c,
                      "SELECT outcome FROM queue.workflow_complete_batch('stb', '"
                          + bad
                          + "'::jsonb)"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("state key \"bad key\"");
    }
  }

  @Test
  void changesThatBreakALimitRaiseNamingTheFieldAndWriteNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "stl");
      String big = "\"" + "x".repeat(140_000) + "\"";
      String[][] cases = {
        {"[1]", "step.state must be an object"},
        {"{\"bad key\": 1}", "step.state key \"bad key\""},
        {"{\"__mine\": 1}", "not starting \"__\""},
        {"{\"k\": " + big + "}", "step.state value of key \"k\""},
      };
      for (String[] bad : cases) {
        assertThatThrownBy(() -> inline(c, h, "a", bad[0]))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(bad[1])
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
        // The general path checks alike.
        assertThatThrownBy(() -> complete(c, h, "a", "{\"delayMs\": 1000}", bad[0]))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(bad[1]);
      }
      StringBuilder sixty = new StringBuilder("{");
      StringBuilder fifty = new StringBuilder("{");
      for (int i = 0; i < 60; i++) {
        sixty.append(i == 0 ? "" : ",").append("\"a").append(i).append("\": ").append(i);
      }
      for (int i = 0; i < 50; i++) {
        fifty.append(i == 0 ? "" : ",").append("\"b").append(i).append("\": ").append(i);
      }
      assertThat(inline(c, h, "first", sixty + "}")).isEqualTo("ok");
      assertThatThrownBy(() -> inline(c, h, "second", fifty + "}"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("would set 110 keys")
          .hasMessageContaining("at most 100");
      // Removing keys makes room: the fold counts what stays set.
      StringBuilder swap = new StringBuilder("{");
      for (int i = 0; i < 50; i++) {
        swap.append(i == 0 ? "" : ",")
            .append("\"a")
            .append(i)
            .append("\": null, \"b")
            .append(i)
            .append("\": ")
            .append(i);
      }
      assertThat(inline(c, h, "second", swap + "}")).isEqualTo("ok");
      assertThat(rows(c, "SELECT key FROM queue.workflow_state(" + h.run() + ")")).hasSize(60);
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + h.run()))
          .isEqualTo("2");
    }
  }

  private static String keys(String prefix, int from, int to) {
    StringBuilder b = new StringBuilder("{");
    for (int i = from; i < to; i++) {
      b.append(i == from ? "" : ",").append('"').append(prefix).append(i).append("\": ").append(i);
    }
    return b.append('}').toString();
  }

  @Test
  void parallelStepsCountTheKeyLimitWithTheEarlierStepsOfTheSameCall() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "stp");
      assertThat(inline(c, h, "first", keys("a", 0, 60))).isEqualTo("ok");
      // Each step alone fits beside the run's 60 keys; together they would make 120.
      String steps =
          "[{\"name\": \"p1\", \"kind\": \"run\", \"output\": 1},"
              + " {\"name\": \"p2\", \"kind\": \"run\", \"output\": 1, \"state\": "
              + keys("b", 0, 30)
              + "}, {\"name\": \"p3\", \"kind\": \"run\", \"output\": 1, \"state\": "
              + keys("c", 0, 30)
              + "}]";
      assertThatThrownBy(() -> WorkflowSql.journalSteps(c, h, steps))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("steps[2].state would set 120 keys")
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_step WHERE run_id = " + h.run()))
          .isEqualTo("1");
      // A step that removes keys makes room for a later one in the same call.
      String room =
          "[{\"name\": \"p1\", \"kind\": \"run\", \"output\": 1, \"state\": {\"a0\": null,"
              + " \"a1\": null}}, {\"name\": \"p2\", \"kind\": \"run\", \"output\": 1,"
              + " \"state\": "
              + keys("b", 0, 40)
              + "}, {\"name\": \"p3\", \"kind\": \"run\", \"output\": 1}]";
      assertThat(WorkflowSql.journalSteps(c, h, room)).isEqualTo("ok:3");
      assertThat(rows(c, "SELECT key FROM queue.workflow_state(" + h.run() + ")")).hasSize(98);
      // A stale call answers stale before any check of its changes.
      Held stale = new Held(h.run(), h.msg() + 1000, h.receipt());
      assertThat(WorkflowSql.journalSteps(c, stale, steps)).isEqualTo("stale:0");
    }
  }

  @Test
  void aKeysVersionOnlyGrowsAcrossARestart() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "str");
      assertThat(inline(c, h, "a", "{\"k\": 1}")).isEqualTo("ok");
      assertThat(inline(c, h, "b", "{\"k\": 2}")).isEqualTo("ok");
      assertThat(inline(c, h, "c", "{\"k\": 3}")).isEqualTo("ok");
      assertThat(state(c, h)).isEqualTo("k=3@3");
      query(c, "SELECT queue.workflow_cancel(" + h.run() + ")");
      // The restart sets b and c aside: k is 1 again, at the version a gave it.
      assertThat(query(c, "SELECT queue.workflow_restart(" + h.run() + ", 'b')")).isEqualTo("2");
      assertThat(state(c, h)).isEqualTo("k=1@1");
      Held again = WorkflowSql.poll(c, "str");
      // b's row takes seq 2 again, but k's next version is past every one it had.
      assertThat(inline(c, again, "b", "{\"k\": 4}")).isEqualTo("ok");
      assertThat(state(c, again)).isEqualTo("k=4@4");
      // A fork keeps the copied rows' versions; its own later rows draw greater ones.
      String fork = query(c, "SELECT queue.workflow_fork(" + h.run() + ", 'b', NULL, false)");
      assertThat(rows(c, "SELECT key || '@' || version FROM queue.workflow_state(" + fork + ")"))
          .containsExactly("k@1");
    }
  }
}
