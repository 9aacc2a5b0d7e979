package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowModel.Held;
import dev.pgworkflows.sql.WorkflowModel.Run;
import dev.pgworkflows.sql.WorkflowModel.Signal;
import dev.pgworkflows.sql.WorkflowModel.Status;
import dev.pgworkflows.sql.WorkflowModel.Step;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.statistics.Statistics;

/**
 * The state of one stateful workflow test: a workflow of its own in the database, its {@link
 * WorkflowModel}, and the connections the calls go through. The workflow functions read the
 * database's clock, so tasks are due now or leased for a minute; a lease of 0 seconds stands for a
 * lease that ran out (the task is due again, and whoever polls next takes it with a new receipt).
 * The sweep takes a time: now, or two days on (every run here keeps one day).
 */
final class WorkflowsAgainstModel {
  private static final AtomicInteger counter = new AtomicInteger();

  final List<Connection> connections;
  final String workflow;
  final WorkflowModel model = new WorkflowModel();

  /** Every run this test started, swept ones too (for signals and cancels of runs gone). */
  final List<Long> startedRuns = new ArrayList<>();

  WorkflowsAgainstModel(List<Connection> connections) {
    this.connections = connections;
    this.workflow = "model_w" + ProcessHandle.current().pid() + "_" + counter.incrementAndGet();
    // Ended runs of earlier tries go, so a sweep's count is this try's alone.
    try (Statement s = c(0).createStatement()) {
      s.execute(
          "SELECT queue.sweep_workflow_runs(100000, clock_timestamp() + interval '1000 days')");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String toString() {
    return "workflow " + workflow + ", runs " + model.runs.keySet();
  }

  // ---- actions -------------------------------------------------------------------------------

  void start(int conn, String key) throws SQLException {
    model.now++;
    long id;
    String status;
    boolean created;
    try (PreparedStatement ps =
        c(conn)
            .prepareStatement(
                "SELECT run_id, status, created FROM queue.workflow_start(?, '1'::jsonb, NULL, ?, 1)")) {
      ps.setString(1, workflow);
      ps.setString(2, key);
      ResultSet rs = single(ps);
      id = rs.getLong(1);
      status = rs.getString(2);
      created = rs.getBoolean(3);
    }
    Run existing = model.byKey(key);
    if (existing != null) {
      assertThat(created).as("a second start with key %s creates nothing", key).isFalse();
      assertThat(id).as("the run of key %s", key).isEqualTo(existing.id);
      assertThat(status).isEqualTo(existing.status.name());
    } else {
      assertThat(created).as("a start creates a run").isTrue();
      assertThat(model.runs).doesNotContainKey(id);
      assertThat(status).isEqualTo("running");
      model.started(id, key);
      startedRuns.add(id);
    }
  }

  void poll(int conn, int qty, boolean lease) throws SQLException {
    model.now++;
    List<Run> due = model.runs.values().stream().filter(Run::due).toList();
    List<long[]> got = new ArrayList<>();
    Map<Long, String[]> seen = new HashMap<>();
    try (PreparedStatement ps =
        c(conn)
            .prepareStatement(
                "SELECT run_id, msg_id, receipt, attempt, reason, journal FROM"
                    + " queue.workflow_poll(?, '{1}', ?, ?)")) {
      ps.setString(1, workflow);
      ps.setInt(2, qty);
      ps.setInt(3, lease ? 60 : 0);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          got.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getInt(4)});
          seen.put(rs.getLong(1), new String[] {rs.getString(5), rs.getString(6)});
        }
      }
    }
    assertThat(got)
        .as("tasks handed out (%d due, %d asked)", due.size(), qty)
        .hasSize(Math.min(qty, due.size()));
    long latest = Long.MIN_VALUE;
    for (long[] t : got) {
      Run r = model.runs.get(t[0]);
      assertThat(r).as("run %d handed out", t[0]).isNotNull();
      assertThat(r.due()).as("run %d's task was due", r.id).isTrue();
      latest = Math.max(latest, r.dueSince);
    }
    for (Run r : due) {
      if (got.stream().noneMatch(t -> t[0] == r.id)) {
        // Oldest due first: a due task left behind became due no earlier than any taken.
        assertThat(r.dueSince)
            .as("run %d passed over for a younger task", r.id)
            .isGreaterThanOrEqualTo(latest);
      }
    }
    for (long[] t : got) {
      Run r = model.runs.get(t[0]);
      if (r.msg != null) {
        assertThat(t[1]).as("run %d's message", r.id).isEqualTo(r.msg);
      } else {
        assertThat(model.held).as("a new task is a new message").noneMatch(h -> h.msg() == t[1]);
      }
      assertThat(model.held)
          .as("a new lease, a new receipt")
          .noneMatch(h -> h.msg() == t[1] && h.receipt() == t[2]);
      assertThat((int) t[3]).as("attempt of run %d", r.id).isEqualTo(r.attempts + 1);
      assertThat(seen.get(r.id)[0]).as("reason of run %d's task", r.id).isEqualTo(r.reason);
      assertThat(stepNames(seen.get(r.id)[1])).as("journal of run %d", r.id).isEqualTo(names(r));
      model.handedOut(r, t[1], t[2], lease);
    }
  }

  /** How a step completion sends the run on. */
  enum Next {
    SLEEP,
    WAIT_E,
    WAIT_F,
    COMPLETED,
    FAILED
  }

  /**
   * Completes a step of the {@code task}th task handed out: the run's next step, or with {@code
   * repeat} the step it journaled last (as a worker's retry after a lost answer, or a body that is
   * not deterministic, sends it); alone, or with {@code batch} as the one item of a batch.
   */
  void complete(int conn, int task, Next next, boolean repeat, boolean batch) throws SQLException {
    model.now++;
    if (model.held.isEmpty()) {
      return; // a shrunk sequence may have dropped the poll that handed this task out
    }
    Held h = model.held.get(Math.min(task, model.held.size() - 1));
    Run r = model.runs.get(h.run());
    String nextJson =
        switch (next) {
          case SLEEP -> "{\"delayMs\": 0}";
          case WAIT_E, WAIT_F ->
              "{\"wait\": {\"step\": \"w"
                  + (r == null ? 0 : r.journal.size() + 1)
                  + "\", \"event\": \""
                  + (next == Next.WAIT_E ? "e" : "f")
                  + "\"}}";
          default -> null;
        };
    String result =
        switch (next) {
          case COMPLETED -> "{\"status\": \"completed\", \"output\": 1}";
          case FAILED -> "{\"status\": \"failed\", \"error\": {\"message\": \"no\"}}";
          default -> null;
        };
    String stepName =
        r == null
            ? "s0"
            : repeat && !r.journal.isEmpty()
                ? r.journal.get(r.journal.size() - 1).name()
                : r.nextStepName();
    String sql =
        batch
            ? "SELECT outcome, next_msg_id FROM queue.workflow_complete_batch('"
                + workflow
                + "', ?::jsonb)"
            : "SELECT outcome, next_msg_id FROM queue.workflow_complete_step(?, ?, ?, ?, 'run',"
                + " '1'::jsonb, NULL, NULL, ?::jsonb, ?::jsonb, 60)";
    if (r == null && !batch) {
      assertThatThrownBy(() -> call(conn, sql, h, stepName, nextJson, result))
          .as("completing a swept run")
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("P0002");
      return;
    }
    String[] got =
        batch
            ? callBatch(conn, sql, h, stepName, nextJson, result)
            : call(conn, sql, h, stepName, nextJson, result);
    Statistics.label("completions").collect(got[0]);
    if (r == null) {
      assertThat(got[0]).as("a batch completing a swept run").isEqualTo("not_found");
      return;
    }
    if (r.status != Status.running) {
      assertThat(got[0]).as("completion for ended run %d", r.id).isEqualTo("not_running");
      return;
    }
    if (!model.holds(r, h)) {
      assertThat(got[0]).as("completion with a stale receipt %s", h).isEqualTo("stale");
      return;
    }
    if (model.journaled(r, stepName)) {
      // A step journaled already changes nothing: the run keeps its task, lease and receipt.
      assertThat(got[0])
          .as("completion of run %d's journaled step %s", r.id, stepName)
          .isEqualTo("duplicate");
      return;
    }
    assertThat(got[0]).as("completion of run %d", r.id).isEqualTo("ok");
    model.journal(r);
    switch (next) {
      case SLEEP -> r.newTask("resume", model.now);
      case WAIT_E, WAIT_F -> {
        r.hasTask = false;
        model.beginWait(r, next == Next.WAIT_E ? "e" : "f");
        if (r.waitStep != null) {
          assertThat(got[1]).as("a wait with no timeout has no task").isNull();
        } else {
          assertThat(got[1]).as("a buffered signal ends the wait at once").isNotNull();
        }
      }
      case COMPLETED -> r.end(Status.completed);
      case FAILED -> r.end(Status.failed);
    }
  }

  void retry(int conn, int task) throws SQLException {
    model.now++;
    if (model.held.isEmpty()) {
      return; // a shrunk sequence may have dropped the poll that handed this task out
    }
    Held h = model.held.get(Math.min(task, model.held.size() - 1));
    Run r = model.runs.get(h.run());
    String sql = "SELECT queue.workflow_retry(?, ?, ?, 0)";
    if (r == null) {
      assertThatThrownBy(() -> callRetry(conn, sql, h))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("P0002");
      return;
    }
    String got = callRetry(conn, sql, h);
    Statistics.label("retries").collect(got);
    if (r.status != Status.running) {
      assertThat(got).isEqualTo("not_running");
    } else if (!model.holds(r, h)) {
      assertThat(got).as("retry with a stale receipt %s", h).isEqualTo("stale");
    } else {
      assertThat(got).isEqualTo("ok");
      r.leased = false;
      r.receipt = null;
      r.dueSince = model.now;
    }
  }

  void signal(int conn, int run, String event, String key) throws SQLException {
    model.now++;
    long runId = runId(run);
    String outcome;
    try (PreparedStatement ps =
        c(conn)
            .prepareStatement("SELECT outcome FROM queue.workflow_signal(?, ?, '1'::jsonb, ?)")) {
      ps.setLong(1, runId);
      ps.setString(2, event);
      ps.setString(3, key);
      outcome = single(ps).getString(1);
    }
    Statistics.label("signals").collect(outcome);
    Run r = model.runs.get(runId);
    if (r == null) {
      assertThat(outcome).isEqualTo("no such run");
    } else if (key != null && r.inbox.stream().anyMatch(s -> key.equals(s.key))) {
      assertThat(outcome).as("a repeated signal key").isEqualTo("duplicate");
    } else if (r.status != Status.running) {
      assertThat(outcome).isEqualTo("not running");
    } else {
      Signal s = new Signal(event, key);
      r.inbox.add(s);
      if (event.equals(r.waitEvent)) {
        assertThat(outcome)
            .as("signal %s to run %d waiting for it", event, runId)
            .isEqualTo("delivered");
        model.deliver(r, s);
      } else {
        assertThat(outcome)
            .as("signal %s to run %d not waiting for it", event, runId)
            .isEqualTo("buffered");
      }
    }
  }

  void cancel(int conn, int run) throws SQLException {
    model.now++;
    long runId = runId(run);
    Run r = model.runs.get(runId);
    String sql = "SELECT cancelled, status FROM queue.workflow_cancel(?)";
    if (r == null) {
      assertThatThrownBy(() -> callCancel(conn, sql, runId))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("P0002");
      return;
    }
    String[] got = callCancel(conn, sql, runId);
    if (r.status == Status.running) {
      assertThat(got).containsExactly("t", "cancelled");
      r.end(Status.cancelled);
    } else {
      assertThat(got).containsExactly("f", r.status.name());
    }
  }

  void sweep(int conn, boolean twoDaysOn) throws SQLException {
    model.now++;
    int got;
    try (Statement s = c(conn).createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT queue.sweep_workflow_runs(1000, "
                    + (twoDaysOn ? "clock_timestamp() + interval '2 days'" : "NULL")
                    + ")")) {
      rs.next();
      got = rs.getInt(1);
    }
    int expected = twoDaysOn ? model.sweep() : 0;
    Statistics.label("runs swept").collect(got > 0);
    assertThat(got).as("runs swept").isEqualTo(expected);
  }

  /** The id of the {@code run}th run started, or of one that never was for -1. */
  private long runId(int run) {
    // A shrunk sequence may have dropped the start this index counted on.
    return run < 0 || startedRuns.isEmpty()
        ? Long.MAX_VALUE / 2
        : startedRuns.get(Math.min(run, startedRuns.size() - 1));
  }

  // ---- invariants ----------------------------------------------------------------------------

  record RunRow(long id, String status, String key, Long msg, String waitEvent) {}

  record MsgRow(long id, long run, int readCount, boolean leased, long receipt, boolean head) {}

  /** After every step: the run rows, journals, inboxes and the queue say what the model says. */
  void check() {
    try {
      checkAll();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private void checkAll() throws SQLException {
    List<RunRow> rows = new ArrayList<>();
    try (PreparedStatement ps =
        c(0).prepareStatement(
                "SELECT run_id, status, idempotency_key, current_msg_id, wait_event"
                    + " FROM queue.workflow_run WHERE workflow_name = ? ORDER BY run_id")) {
      ps.setString(1, workflow);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new RunRow(
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getString(3),
                  (Long) rs.getObject(4),
                  rs.getString(5)));
        }
      }
    }
    assertThat(rows.stream().map(RunRow::id).toList())
        .as("runs of %s", workflow)
        .containsExactlyElementsOf(model.runs.keySet());
    Map<Long, MsgRow> msgs = messages();
    for (RunRow row : rows) {
      Run r = model.runs.get(row.id());
      assertThat(row.status()).as("status of run %d", r.id).isEqualTo(r.status.name());
      assertThat(row.key()).isEqualTo(r.key);
      assertThat(row.waitEvent()).as("wait of run %d", r.id).isEqualTo(r.waitEvent);
      assertThat(row.msg() != null).as("run %d has a task", r.id).isEqualTo(r.hasTask);
      assertThat(journal(r.id)).as("journal of run %d", r.id).isEqualTo(r.journal);
      assertThat(inbox(r.id))
          .as("inbox of run %d", r.id)
          .isEqualTo(r.inbox.stream().map(Signal::toString).toList());
      if (r.hasTask) {
        MsgRow m = msgs.get(row.msg());
        assertThat(m).as("run %d's task %d is on the queue", r.id, row.msg()).isNotNull();
        assertThat(m.run()).isEqualTo(r.id);
        assertThat(m.head()).as("run %d's task is its group's head", r.id).isTrue();
        if (r.msg != null) {
          assertThat(m.id()).isEqualTo(r.msg);
        }
        assertThat(m.readCount()).as("attempts of run %d's task", r.id).isEqualTo(r.attempts);
        assertThat(m.leased()).as("run %d's task is leased", r.id).isEqualTo(r.leased);
        if (r.receipt != null) {
          assertThat(m.receipt()).as("run %d's receipt", r.id).isEqualTo(r.receipt);
        }
      }
    }
    // Nothing else is on the queue: each running run with a task has exactly one message.
    assertThat(msgs.keySet())
        .as("messages of %s", workflow)
        .containsExactlyInAnyOrderElementsOf(
            rows.stream().map(RunRow::msg).filter(Objects::nonNull).toList());
  }

  private Map<Long, MsgRow> messages() throws SQLException {
    Map<Long, MsgRow> out = new HashMap<>();
    try (Statement s = c(0).createStatement()) {
      if (!exists(s)) {
        return out;
      }
      try (ResultSet rs =
          s.executeQuery(
              "SELECT msg_id, group_id::bigint, read_ct, vt > clock_timestamp(),"
                  + " queue.receipt_of(vt), head FROM queue.\"q___wf_"
                  + workflow
                  + "\"")) {
        while (rs.next()) {
          out.put(
              rs.getLong(1),
              new MsgRow(
                  rs.getLong(1),
                  rs.getLong(2),
                  rs.getInt(3),
                  rs.getBoolean(4),
                  rs.getLong(5),
                  rs.getBoolean(6)));
        }
      }
    }
    return out;
  }

  private boolean exists(Statement s) throws SQLException {
    try (ResultSet rs =
        s.executeQuery(
            "SELECT count(*) FROM queue.queue_meta WHERE queue_name = '__wf_" + workflow + "'")) {
      rs.next();
      return rs.getInt(1) > 0;
    }
  }

  private List<Step> journal(long run) throws SQLException {
    List<Step> out = new ArrayList<>();
    try (PreparedStatement ps =
        c(0).prepareStatement(
                "SELECT step_name, attempts FROM queue.workflow_step WHERE run_id = ? ORDER BY seq")) {
      ps.setLong(1, run);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Step(rs.getString(1), rs.getInt(2)));
        }
      }
    }
    return out;
  }

  private List<String> inbox(long run) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps =
        c(0).prepareStatement(
                "SELECT event, delivered_at IS NOT NULL FROM queue.workflow_signals(?)")) {
      ps.setLong(1, run);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1) + (rs.getBoolean(2) ? " delivered" : " buffered"));
        }
      }
    }
    return out;
  }

  /** The step names of a poll's journal (a JSON array of steps with a "name" each). */
  private List<String> stepNames(String journalJson) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps =
        c(0).prepareStatement("SELECT s ->> 'name'" + " FROM jsonb_array_elements(?::jsonb) s")) {
      ps.setString(1, journalJson);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  private static List<String> names(Run r) {
    return r.journal.stream().map(Step::name).toList();
  }

  // ---- SQL -----------------------------------------------------------------------------------

  private String[] call(int conn, String sql, Held h, String step, String next, String result)
      throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setLong(1, h.run());
      ps.setLong(2, h.msg());
      ps.setLong(3, h.receipt());
      ps.setString(4, step);
      ps.setString(5, next);
      ps.setString(6, result);
      ResultSet rs = single(ps);
      return new String[] {rs.getString(1), rs.getString(2)};
    }
  }

  /** A batch of one completion, as {@link #call}: the item's outcome and next message. */
  private String[] callBatch(int conn, String sql, Held h, String step, String next, String result)
      throws SQLException {
    String item =
        "{\"run_id\": "
            + h.run()
            + ", \"msg_id\": "
            + h.msg()
            + ", \"receipt\": "
            + h.receipt()
            + ", \"step_name\": \""
            + step
            + "\", \"step_kind\": \"run\", \"output\": 1"
            + (next == null ? "" : ", \"next\": " + next)
            + (result == null ? "" : ", \"result\": " + result)
            + "}";
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setString(1, "[" + item + "]");
      ResultSet rs = single(ps);
      return new String[] {rs.getString(1), rs.getString(2)};
    }
  }

  private String callRetry(int conn, String sql, Held h) throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setLong(1, h.run());
      ps.setLong(2, h.msg());
      ps.setLong(3, h.receipt());
      return single(ps).getString(1);
    }
  }

  private String[] callCancel(int conn, String sql, long run) throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setLong(1, run);
      ResultSet rs = single(ps);
      return new String[] {rs.getString(1), rs.getString(2)};
    }
  }

  private Connection c(int conn) {
    return connections.get(conn);
  }

  private static ResultSet single(PreparedStatement ps) throws SQLException {
    ResultSet rs = ps.executeQuery();
    assertThat(rs.next()).isTrue();
    return rs;
  }
}
