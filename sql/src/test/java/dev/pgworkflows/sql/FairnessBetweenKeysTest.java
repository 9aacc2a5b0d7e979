package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Under a workflow's total limit, waiting runs are admitted round-robin by key, weighted, instead
 * of oldest first overall: a key with a long backlog does not hold back the others.
 */
class FairnessBetweenKeysTest {
  private final Map<Long, String> keyOf = new HashMap<>();

  private void start(Connection c, String wf, String key, int n) throws SQLException {
    for (int i = 0; i < n; i++) {
      long run =
          Long.parseLong(
              query(
                  c,
                  "SELECT run_id FROM queue.workflow_start('"
                      + wf
                      + "', '1'::jsonb, NULL, NULL, NULL, 365, NULL,"
                      + " jsonb_build_object('concurrencyKey', '"
                      + key
                      + "'))"));
      keyOf.put(run, key);
    }
  }

  private static List<WorkflowSql.Held> poll(Connection c, String wf, int n) throws SQLException {
    List<WorkflowSql.Held> out = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT run_id, msg_id, receipt FROM queue.workflow_poll(?, '{1}', ?, 60)"); ) {
      ps.setString(1, wf);
      ps.setInt(2, n);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new WorkflowSql.Held(rs.getLong(1), rs.getLong(2), rs.getLong(3)));
        }
      }
    }
    return out;
  }

  /**
   * Polls until every due task is handed out or parked: the runs handed out, their keys added to
   * {@code order}.
   */
  private List<WorkflowSql.Held> settle(Connection c, String wf, List<String> order)
      throws SQLException {
    List<WorkflowSql.Held> held = new ArrayList<>();
    for (List<WorkflowSql.Held> got = poll(c, wf, 10); ; got = poll(c, wf, 10)) {
      held.addAll(got);
      got.forEach(h -> order.add(keyOf.get(h.run())));
      if (got.isEmpty()
          && query(c, "SELECT count(*) FROM queue.q___wf_" + wf + " WHERE vt <= now()")
              .equals("0")) {
        return held;
      }
    }
  }

  /**
   * Polls until every due task is handed out or parked, then, {@code turns} times, completes the
   * oldest held run and takes the run woken for its slot: the keys in the order they were handed
   * out, the first {@code total} included.
   */
  private List<String> handOuts(Connection c, String wf, int turns) throws SQLException {
    List<String> order = new ArrayList<>();
    List<WorkflowSql.Held> held = settle(c, wf, order);
    for (int i = 0; i < turns; i++) {
      WorkflowSql.Held done = held.remove(0);
      complete(c, done, "s", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60");
      List<WorkflowSql.Held> next = poll(c, wf, 10);
      assertThat(next).as("the run woken for the freed slot").hasSize(1);
      held.addAll(next);
      order.add(keyOf.get(next.get(0).run()));
    }
    return order;
  }

  @Test
  void keysTakeFreedSlotsInTurnNotOldestFirst() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('fair', 100, 'queue', NULL, NULL, 2)");
      start(c, "fair", "a", 30);
      start(c, "fair", "b", 5);
      start(c, "fair", "c", 5);
      List<String> order = handOuts(c, "fair", 15);
      assertThat(order.subList(0, 2)).containsExactly("a", "a");
      assertThat(order.subList(2, 17))
          .containsExactly(
              "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c", "a");
      assertThat(
              query(
                  c,
                  "SELECT count(*) FROM queue.workflow_run WHERE concurrency_key = 'a'"
                      + " AND status = 'running' AND NOT coalesce(slot_held, false)"))
          .as("a's backlog still waits")
          .isEqualTo("23");
    }
  }

  @Test
  void aKeyOfWeightThreeIsAdmittedThreeTimesForEachTurnOfTheOthersOnes() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "SELECT queue.set_concurrency_limit('weighted', 100, 'queue', NULL, NULL, 2,"
              + " '{\"b\": 3}'::jsonb)");
      start(c, "weighted", "a", 30);
      start(c, "weighted", "b", 30);
      start(c, "weighted", "c", 30);
      List<String> order = handOuts(c, "weighted", 25).subList(2, 27);
      Map<String, Integer> counts = new HashMap<>();
      order.forEach(k -> counts.merge(k, 1, Integer::sum));
      // 25 turns of 3 : 1 : 1 are 15, 5 and 5, give or take the turn a round is in.
      assertThat(counts.get("b")).as(order.toString()).isBetween(14, 16);
      assertThat(counts.get("a")).as(order.toString()).isBetween(4, 6);
      assertThat(counts.get("c")).as(order.toString()).isBetween(4, 6);
    }
  }

  @Test
  void slotsFreedTogetherGoByTheRoundNotAllToTheKeyThatWasNext() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "SELECT queue.set_concurrency_limit('paired', 100, 'queue', NULL, NULL, 2,"
              + " '{\"b\": 2}'::jsonb)");
      start(c, "paired", "a", 30);
      start(c, "paired", "b", 30);
      start(c, "paired", "c", 30);
      List<WorkflowSql.Held> held = settle(c, "paired", new ArrayList<>());
      assertThat(held).hasSize(2);
      List<String> order = new ArrayList<>();
      for (int turn = 0; turn < 12; turn++) {
        // Both slots free before either woken run is taken: two wakes, one after the other.
        for (WorkflowSql.Held done : held) {
          complete(c, done, "s", "NULL", "'{\"status\": \"completed\", \"output\": 1}'", "60");
        }
        held = new ArrayList<>(poll(c, "paired", 10));
        assertThat(held).as("the runs woken for the two freed slots").hasSize(2);
        held.forEach(h -> order.add(keyOf.get(h.run())));
      }
      Map<String, Integer> counts = new HashMap<>();
      order.forEach(k -> counts.merge(k, 1, Integer::sum));
      // 24 turns of 2 : 1 : 1 are 12, 6 and 6, give or take the turn a round is in.
      assertThat(counts.get("b")).as(order.toString()).isBetween(11, 13);
      assertThat(counts.get("a")).as(order.toString()).isBetween(5, 7);
      assertThat(counts.get("c")).as(order.toString()).isBetween(5, 7);
    }
  }

  @Test
  void aKeysOwnLimitStillHoldsUnderTheTotal() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('capped', 1, 'queue', NULL, NULL, 3)");
      start(c, "capped", "a", 5);
      start(c, "capped", "b", 1);
      assertThat(poll(c, "capped", 10))
          .extracting(h -> keyOf.get(h.run()))
          .containsExactly("a", "b");
      assertThat(
              query(
                  c,
                  "SELECT b::text FROM queue.workflow_blockers('capped', (SELECT min(run_id) FROM"
                      + " queue.workflow_run WHERE NOT coalesce(slot_held, false))) b"))
          .contains("\"shared\": true")
          .contains("\"kind\": \"concurrency\"");
    }
  }

  @Test
  void badFairnessSettingsAreRefusedNamingTheFieldAndChangeNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(c, "SELECT queue.set_concurrency_limit('kept', 2, 'queue', NULL, NULL, 4)");
      assertThatThrownBy(
              () ->
                  exec(c, "SELECT queue.set_concurrency_limit('kept', 2, 'queue', NULL, NULL, 0)"))
          .hasMessageContaining("totalLimit");
      assertThatThrownBy(
              () ->
                  exec(
                      c,
                      "SELECT queue.set_concurrency_limit('kept', 2, 'queue', NULL, NULL, NULL,"
                          + " '{\"a\": 2}')"))
          .hasMessageContaining("weights goes with totalLimit");
      assertThatThrownBy(
              () ->
                  exec(
                      c,
                      "SELECT queue.set_concurrency_limit('kept', 2, 'queue', NULL, NULL, 4,"
                          + " '{\"a\": 1.5}')"))
          .hasMessageContaining("weights.a must be a whole number from 1 to 1000");
      assertThat(
              query(
                  c,
                  "SELECT concat_ws(' ', total_limit, coalesce(weights::text, '-'))"
                      + " FROM queue.concurrency_settings_of('kept')"))
          .isEqualTo("4 -");
    }
  }
}
