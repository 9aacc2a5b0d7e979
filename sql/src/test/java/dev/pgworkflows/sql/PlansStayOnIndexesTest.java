package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A session plans its functions' statements once and keeps the plans. Planned while the tables were
 * empty and kept after they grew (no ANALYZE in between, as between autovacuum visits), the plans
 * of the request functions must still use indexes: counted from the transaction's own scan
 * statistics, not timed.
 */
class PlansStayOnIndexesTest {

  /**
   * The functions on request paths, whose definitions pin enable_seqscan and plan_cache_mode. Not
   * send: the planner inlines it (a SET would prevent that) into a call of enqueue or
   * send_to_workflow.
   */
  private static final String REQUEST_FUNCTIONS =
      "'enqueue', 'send_to_workflow', 'send_batch', 'receive', 'receive_fifo', 'delete',"
          + " 'change_visibility', 'next_visible_at', 'publish', 'claim_deliveries', 'finish_delivery',"
          + " 'next_delivery_at', 'redrive_dead_letters', 'workflow_start', 'workflow_start_batch',"
          + " 'workflow_poll', 'workflow_complete_step', 'workflow_complete_batch',"
          + " 'workflow_extend_lease', 'workflow_retry', 'workflow_signal', 'workflow_cancel',"
          + " 'workflow_journal', 'workflow_start_each', 'workflow_continue_step',"
          + " 'workflow_start_leased', 'workflow_complete_ended', 'workflow_journal_steps',"
          + " 'schedule_create', 'schedule_update', 'schedule_register', 'schedule_pause',"
          + " 'schedule_delete', 'schedule_get', 'schedule_due', 'schedule_fire',"
          + " 'flow_start', 'flow_wake', 'flow_release', 'flow_admit', 'set_concurrency_limit',"
          + " 'set_rate_limit', 'workflow_rate_limited', 'workflow_debounce', 'workflow_expire',"
          + " 'set_key_concurrency_limit', 'flow_wake_up_to', 'workflow_blockers', 'worker_report',"
          + " 'worker_expire', 'worker_list',"
          + " 'workflow_pause_set', 'workflow_run_pause', 'workflow_restart', 'workflow_fork',"
          + " 'workflow_journal_with_aside', 'group_pause_set', 'group_park', 'parked_list',"
          + " 'parked_redrive', 'workflow_continue_as_new', 'workflow_chain', 'workflow_chain_last'";

  private static final String SEQ_SCANS = "SELECT pg_stat_get_xact_numscans('queue.%s'::regclass)";

  @Test
  void receivePlannedOnAnEmptyQueueStillWalksTheIndexWhenItIsDeep() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("grown", false, 30, null);
      for (int i = 0; i < 10; i++) {
        assertThat(q.receive("grown", 5)).isEmpty();
      }
      try (Statement s = c.createStatement()) {
        // 20,000 messages not yet visible, then 10 that are.
        s.execute(
            "INSERT INTO queue.q_grown (head, enqueued_at, vt, body)"
                + " SELECT true, now(), now() + interval '1 hour', jsonb_build_object('n', n)"
                + " FROM generate_series(1, 20000) n");
      }
      for (int i = 0; i < 10; i++) {
        q.send("grown", "{\"ready\": " + i + "}");
      }
      c.setAutoCommit(false);
      try {
        long scans = q.scalarLong(String.format(SEQ_SCANS, "q_grown"));
        long fetched = q.scalarLong(tuplesRead("q_grown"));
        assertThat(q.receive("grown", 5)).hasSize(5);
        assertThat(q.receive("grown", 5)).hasSize(5);
        assertThat(q.scalarLong(String.format(SEQ_SCANS, "q_grown")) - scans)
            .as("sequential scans of the queue table")
            .isZero();
        assertThat(q.scalarLong(tuplesRead("q_grown")) - fetched).isLessThan(200);
      } finally {
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  @Test
  void aCompletionBatchPlannedOnFewRunsStillLooksRunsUpByKeyWhenThereAreMany() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      for (int i = 0; i < 8; i++) {
        assertThat(startPollAndFinish(c)).isEqualTo("ok");
      }
      try (Statement s = c.createStatement()) {
        s.execute(
            "INSERT INTO queue.workflow_run (workflow_name, workflow_version, status, input,"
                + " output, retention_days, completed_at)"
                + " SELECT 'grown', 1, 'completed', 'null', 'null', 7, now()"
                + " FROM generate_series(1, 20000)");
        // And 20,000 runs' messages that are not due yet, each the head of its own group.
        s.execute(
            "INSERT INTO queue.q___wf_grown (group_id, head, enqueued_at, vt, body)"
                + " SELECT 'x' || n, true, now(), now() + interval '1 hour', '{}'"
                + " FROM generate_series(1, 20000) n");
      }
      c.setAutoCommit(false);
      try {
        QueueSql q = new QueueSql(c);
        long runScans = q.scalarLong(String.format(SEQ_SCANS, "workflow_run"));
        long queueScans = q.scalarLong(String.format(SEQ_SCANS, "q___wf_grown"));
        assertThat(startPollAndFinish(c)).isEqualTo("ok");
        assertThat(q.scalarLong(String.format(SEQ_SCANS, "workflow_run")) - runScans)
            .as("sequential scans of workflow_run")
            .isZero();
        assertThat(q.scalarLong(String.format(SEQ_SCANS, "q___wf_grown")) - queueScans)
            .as("sequential scans of the workflow's queue table")
            .isZero();
      } finally {
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  @Test
  void aWorkflowPollTakesTheOldestDueTasksWithoutReadingTheWholeBacklog() throws SQLException {
    // A burn-down: thousands of runs due at once. The poll's receive filters on the worker's
    // versions; with a bitmap scan and a sort it read every due message to hand out a few.
    try (Connection c = TestDatabase.fresh().connect()) {
      try (Statement s = c.createStatement()) {
        s.execute(
            "SELECT queue.workflow_start('deep', jsonb_build_object('n', n))"
                + " FROM generate_series(1, 20000) n");
      }
      c.setAutoCommit(false);
      try {
        QueueSql q = new QueueSql(c);
        long fetched = q.scalarLong(tuplesRead("q___wf_deep"));
        try (PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM queue.workflow_poll('deep', '{1}', 10, 60)")) {
          assertThat(single(ps).getInt(1)).isEqualTo(10);
        }
        assertThat(q.scalarLong(tuplesRead("q___wf_deep")) - fetched)
            .as("queue tuples read by one poll")
            .isLessThan(200);
      } finally {
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  @Test
  void aLongRunsNextStepFindsItsPlaceWithoutReadingTheWholeJournal() throws SQLException {
    // A step's seq is the run's last plus one; found through the journal's key, the last one
    // meant reading every step of the run, so a run of n steps read n²/2 journal rows.
    try (Connection c = TestDatabase.fresh().connect()) {
      WorkflowSql.Held h = WorkflowSql.startAndPoll(c, "long");
      assertThat(WorkflowSql.inline(c, h, "first")).startsWith("ok:");
      try (Statement s = c.createStatement()) {
        s.execute(
            "INSERT INTO queue.workflow_step (run_id, step_name, seq, kind, started_at)"
                + " SELECT "
                + h.run()
                + ", 'past-' || n, n + 1, 'run', now() FROM generate_series(1, 5000) n");
      }
      c.setAutoCommit(false);
      try {
        QueueSql q = new QueueSql(c);
        long read = q.scalarLong(tuplesRead("workflow_step"));
        assertThat(WorkflowSql.inline(c, h, "next")).startsWith("ok:");
        assertThat(q.scalarLong(tuplesRead("workflow_step")) - read)
            .as("journal rows read by one step of a run with 5,001 of them")
            .isLessThan(20);
        assertThat(
                q.scalarLong(
                    "SELECT seq FROM queue.workflow_step WHERE run_id = "
                        + h.run()
                        + " AND step_name = 'next'"))
            .isEqualTo(5002);
      } finally {
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  @Test
  void startsHandedToAPollLeaseTheirMessagesByKeyOnStatisticsOfAnEmptyQueue() throws SQLException {
    // A workflow's queue is often empty when autovacuum analyzes it. On such statistics the
    // batch lease was planned on the ready index, (vt, msg_id) WHERE head, and read every entry
    // visible by now, dead ones included: 20,000 here.
    try (Connection c = TestDatabase.fresh().connect()) {
      WorkflowSql.exec(c, "SELECT queue.workflow_start('handed', '1'::jsonb)");
      WorkflowSql.exec(c, "DELETE FROM queue.q___wf_handed");
      WorkflowSql.exec(c, "ALTER TABLE queue.q___wf_handed SET (autovacuum_enabled = false)");
      WorkflowSql.exec(c, "VACUUM ANALYZE queue.q___wf_handed");
      WorkflowSql.exec(
          c,
          "INSERT INTO queue.q___wf_handed (group_id, head, enqueued_at, vt, body)"
              + " SELECT 'gone-' || n, true, now(), now() - n * interval '1 ms', '{}'"
              + " FROM generate_series(1, 20000) n");
      WorkflowSql.exec(c, "DELETE FROM queue.q___wf_handed");
      WorkflowSql.exec(c, "ANALYZE queue.q___wf_handed");
      c.setAutoCommit(false);
      try {
        QueueSql q = new QueueSql(c);
        String blocks =
            "SELECT pg_stat_get_xact_blocks_fetched('queue.q___wf_handed_ready'::regclass)";
        long before = q.scalarLong(blocks);
        assertThat(
                WorkflowSql.query(
                    c,
                    "SELECT count(msg_id) FROM queue.workflow_start_leased('handed',"
                        + " '[{\"input\": 1, \"version\": 1, \"idempotencyKey\": \"k\"}]',"
                        + " '{1}', 1, 60)"))
            .as("a keyed start's message leased")
            .isEqualTo("1");
        assertThat(
                WorkflowSql.query(
                    c,
                    "SELECT count(msg_id) FROM queue.workflow_start_leased('handed',"
                        + " '[{\"input\": 2, \"version\": 1}, {\"input\": 3, \"version\": 1}]',"
                        + " '{1}', 2, 60)"))
            .as("a batch's messages leased")
            .isEqualTo("2");
        assertThat(q.scalarLong(blocks) - before)
            .as("blocks of the ready index read by three handed starts")
            .isLessThan(40);
      } finally {
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  @Test
  void everyRequestFunctionPinsItsPlans() throws SQLException {
    // The settings are part of each definition in sql/functions/; one left out would plan anew.
    try (Connection c = TestDatabase.fresh().connect();
        Statement s = c.createStatement()) {
      for (String setting : List.of("enable_seqscan=off", "plan_cache_mode=force_generic_plan")) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT p.oid::regprocedure::text FROM pg_proc p"
                    + " WHERE p.pronamespace = 'queue'::regnamespace AND p.proname IN ("
                    + REQUEST_FUNCTIONS
                    + ") AND NOT coalesce('"
                    + setting
                    + "' = ANY (p.proconfig), false)")) {
          List<String> missing = new java.util.ArrayList<>();
          while (rs.next()) {
            missing.add(rs.getString(1));
          }
          assertThat(missing).as(setting).isEmpty();
        }
      }
    }
  }

  /**
   * PostgreSQL keeps a prepared statement's generic plan only when it costs no more than the custom
   * plans of its first executions; the receive's did not, so every receive was planned again. The
   * session's own statistics count the custom plans.
   */
  @Test
  void theQueuesStatementsAreNotPlannedAgainOnEveryCall() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      QueueSql q = new QueueSql(c);
      q.create("replans", false, 30, null);
      for (int i = 0; i < 20; i++) {
        long id = q.send("replans", "{\"n\": " + i + "}");
        assertThat(q.receive("replans", 1)).hasSize(1);
        q.delete("replans", id);
      }
      try (Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT name, custom_plans, generic_plans FROM pg_prepared_statements"
                      + " WHERE name LIKE 'q\\_%\\_replans' ORDER BY name")) {
        List<String> plans = new java.util.ArrayList<>();
        while (rs.next()) {
          plans.add(rs.getString(1) + " custom " + rs.getLong(2) + " generic " + rs.getLong(3));
        }
        assertThat(plans)
            .containsExactly(
                "q_del_replans custom 0 generic 20",
                "q_recv_replans custom 0 generic 20",
                "q_send_replans custom 0 generic 20");
      }
    }
  }

  /** Index and heap tuples the session's scans of a table have read in this transaction. */
  private static String tuplesRead(String table) {
    return "SELECT pg_stat_get_xact_tuples_fetched('queue."
        + table
        + "'::regclass) + pg_stat_get_xact_tuples_returned('queue."
        + table
        + "'::regclass)";
  }

  /** Starts a run of "grown", leases it and finishes it in one completion batch: its outcome. */
  private static String startPollAndFinish(Connection c) throws SQLException {
    long run;
    try (PreparedStatement ps =
        c.prepareStatement("SELECT run_id FROM queue.workflow_start('grown', '1'::jsonb)")) {
      run = single(ps).getLong(1);
    }
    long msg;
    long receipt;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT run_id, msg_id, receipt FROM queue.workflow_poll('grown', '{1}', 10, 60)")) {
      ResultSet rs = single(ps);
      assertThat(rs.getLong(1)).isEqualTo(run);
      msg = rs.getLong(2);
      receipt = rs.getLong(3);
    }
    String items = QueueSql.finishingBatch(run, msg, receipt);
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT outcome FROM queue.workflow_complete_batch('grown', ?::jsonb)")) {
      ps.setString(1, items);
      List<String> out = new java.util.ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      assertThat(out).hasSize(1);
      return out.get(0);
    }
  }

  private static ResultSet single(PreparedStatement ps) throws SQLException {
    ResultSet rs = ps.executeQuery();
    assertThat(rs.next()).isTrue();
    return rs;
  }
}
