package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.complete;
import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A start's timing: a delayed first task, a deadline that ends the run as timed_out without a
 * worker, and debounced starts that collapse into one pending run.
 */
class StartTimingTest {

  private static long start(Connection c, String workflow, String input, String timing)
      throws SQLException {
    return Long.parseLong(
        query(
            c,
            "SELECT run_id FROM queue.workflow_start('"
                + workflow
                + "', '"
                + input
                + "'::jsonb, NULL, NULL, NULL, 365, NULL, '"
                + timing
                + "'::jsonb)"));
  }

  private static List<String> pollRuns(Connection c, String workflow) throws SQLException {
    return rows(c, "SELECT run_id FROM queue.workflow_poll('" + workflow + "', '{1}', 10, 60)");
  }

  @Test
  void aDelayedRunExistsAtOnceButIsNotHandedOutBeforeItIsDue() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c, "later", "1", "{\"delayMs\": 60000}");
      assertThat(query(c, "SELECT status FROM queue.workflow_run WHERE run_id = " + run))
          .isEqualTo("running");
      assertThat(
              query(
                  c,
                  "SELECT due_at BETWEEN now() + interval '59 seconds' AND now() + interval '61"
                      + " seconds' FROM queue.workflow_run WHERE run_id = "
                      + run))
          .isEqualTo("t");
      assertThat(pollRuns(c, "later")).isEmpty();
      // Its message is due then.
      assertThat(
              query(
                  c,
                  "SELECT m.vt = r.due_at FROM queue.q___wf_later m JOIN queue.workflow_run r"
                      + " ON m.msg_id = r.current_msg_id WHERE r.run_id = "
                      + run))
          .isEqualTo("t");
      // A startAt in the past means now.
      long now = start(c, "later", "2", "{\"startAt\": \"2001-01-01T00:00:00Z\"}");
      assertThat(pollRuns(c, "later")).containsExactly(Long.toString(now));
      // A delayed run can be cancelled before it is due.
      assertThat(query(c, "SELECT cancelled FROM queue.workflow_cancel(" + run + ")"))
          .isEqualTo("t");
    }
  }

  @Test
  void aStartHandedToAWaitingPollDoesNotLeaseADelayedRun() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      assertThat(
              query(
                  c,
                  "SELECT coalesce(msg_id::text, 'none') FROM queue.workflow_start_leased('handed',"
                      + " '[{\"input\": 1, \"delayMs\": 60000}]'::jsonb, '{1}', 1, 60)"))
          .isEqualTo("none");
      assertThat(
              rows(
                  c,
                  "SELECT coalesce(msg_id::text, 'none') FROM queue.workflow_start_leased('handed',"
                      + " '[{\"input\": 1, \"delayMs\": 60000}, {\"input\": 2}]'::jsonb, '{1}', 2,"
                      + " 60) ORDER BY ord"))
          .first()
          .isEqualTo("none");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run WHERE due_at IS NOT NULL"))
          .isEqualTo("2");
    }
  }

  @Test
  void badTimingIsRefusedNamingTheFieldAndStartsNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String[][] cases = {
        {"{\"delayMs\": 1000, \"startAt\": \"2030-01-01T00:00:00Z\"}", "delayMs"},
        {"{\"startAt\": \"tomorrow\"}", "startAt"},
        {"{\"startAt\": \"2999-01-01T00:00:00Z\"}", "startAt"},
        {"{\"delayMs\": -1}", "delayMs"},
        {"{\"delayMs\": 1.5}", "delayMs"},
        {"{\"deadlineMs\": 0}", "deadlineMs"},
        {"{\"deadlineAt\": \"2001-01-01T00:00:00Z\"}", "deadlineAt"},
        {"{\"debounceKey\": \"k\"}", "debounceMs"},
        {"{\"debounceKey\": \"k\", \"debounceMs\": 10, \"delayMs\": 5}", "debounceKey"},
      };
      for (String[] bad : cases) {
        assertThatThrownBy(() -> start(c, "bad", "1", bad[0]))
            .as(bad[0])
            .isInstanceOf(SQLException.class)
            .hasMessageContaining(bad[1])
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
      }
      assertThatThrownBy(
              () ->
                  exec(
                      c,
                      "SELECT queue.workflow_start_batch('bad', '[{\"input\": 1}, {\"delayMs\":"
                          + " -5}]'::jsonb)"))
          .hasMessageContaining("delayMs");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("0");
    }
  }

  @Test
  void aRunPastItsDeadlineIsEndedAsTimedOutWithItsChildrenAndItsWorkerFindsOut()
      throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      exec(
          c,
          "SELECT queue.workflow_start('slow', '1'::jsonb, NULL, NULL, NULL, 365, NULL,"
              + " '{\"deadlineMs\": 60000}'::jsonb)");
      Held held = poll(c, "slow");
      long kid =
          Long.parseLong(
              query(
                  c,
                  "SELECT run_id FROM queue.workflow_start_child("
                      + held.run()
                      + ", 'k', 'kid', '1'::jsonb, NULL, 'cancel')"));
      long other = startAndPoll(c, "other").run();
      // Not yet due.
      assertThat(rows(c, "SELECT run_id FROM queue.workflow_expire(10)")).isEmpty();
      assertThat(
              rows(
                  c,
                  "SELECT run_id || ':' || status FROM queue.workflow_expire(10, now() + interval"
                      + " '2 minutes') ORDER BY run_id"))
          .containsExactly(held.run() + ":timed_out", kid + ":cancelled");
      assertThat(
              query(
                  c,
                  "SELECT status || ':' || (error ->> 'type') || ':' || (current_msg_id IS NULL)"
                      + " FROM queue.workflow_run WHERE run_id = "
                      + held.run()))
          .isEqualTo("timed_out:DeadlineExceeded:true");
      assertThat(query(c, "SELECT count(*) FROM queue.q___wf_slow")).isEqualTo("0");
      assertThat(complete(c, held, "step", "NULL", "'{\"status\": \"completed\"}'", "60"))
          .startsWith("not_running");
      assertThat(query(c, "SELECT status FROM queue.workflow_run WHERE run_id = " + other))
          .isEqualTo("running");
      assertThat(
              rows(c, "SELECT run_id FROM queue.workflow_expire(10, now() + interval '2 minutes')"))
          .isEmpty();
      // Listed and filtered by the new status.
      assertThat(rows(c, "SELECT run_id FROM queue.workflow_list('slow', 'timed_out')"))
          .containsExactly(Long.toString(held.run()));
    }
  }

  @Test
  void debouncedStartsCollapseIntoOneRunWithTheLatestInputUntilItBegins() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      String key = "{\"debounceKey\": \"user-7\", \"debounceMs\": 60000}";
      long first = start(c, "deb", "1", key);
      assertThat(
              query(
                  c,
                  "SELECT created::text FROM queue.workflow_start('deb', '2'::jsonb, NULL, NULL,"
                      + " NULL, 365, NULL, '"
                      + key
                      + "'::jsonb)"))
          .isEqualTo("false");
      assertThat(start(c, "deb", "3", key)).isEqualTo(first);
      assertThat(query(c, "SELECT input::text FROM queue.workflow_run WHERE run_id = " + first))
          .isEqualTo("3");
      assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("1");
      // Another key is another run.
      assertThat(start(c, "deb", "4", "{\"debounceKey\": \"user-8\", \"debounceMs\": 60000}"))
          .isNotEqualTo(first);
      // The total delay is bounded: ten windows after the run was created it is due.
      exec(
          c,
          "UPDATE queue.workflow_run SET started_at = now() - interval '20 minutes' WHERE run_id = "
              + first);
      start(c, "deb", "5", key);
      assertThat(pollRuns(c, "deb")).containsExactly(Long.toString(first));
      // Once begun, the key starts a new run.
      long second = start(c, "deb", "6", key);
      assertThat(second).isNotEqualTo(first);
    }
  }

  @Test
  void concurrentDebouncedStartsMakeOneRunWithTheInputOfALastStart() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    int n = 20;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CyclicBarrier go = new CyclicBarrier(n);
      List<Future<Long>> runs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int input = i;
        Callable<Long> task =
            () -> {
              try (Connection c = db.connect()) {
                go.await();
                return start(
                    c,
                    "burst",
                    Integer.toString(input),
                    "{\"debounceKey\": \"k\", \"debounceMs\":" + " 60000}");
              }
            };
        runs.add(pool.submit(task));
      }
      List<Long> ids = new ArrayList<>();
      for (Future<Long> f : runs) {
        ids.add(f.get());
      }
      assertThat(ids).containsOnly(ids.get(0));
      try (Connection c = db.connect()) {
        assertThat(query(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo("1");
        int input = Integer.parseInt(query(c, "SELECT input::text FROM queue.workflow_run"));
        assertThat(input).isBetween(0, n - 1);
        assertThat(query(c, "SELECT count(*) FROM queue.q___wf_burst")).isEqualTo("1");
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
