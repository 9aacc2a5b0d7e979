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
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.statistics.Statistics;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * The state of one stateful workflow test: a workflow of its own in the database (its keys limited
 * to {@link WorkflowModel#LIMIT} running run each), its {@link WorkflowModel}, and the connections
 * the calls go through. Polls are told the test's time, the database's clock plus {@link
 * WorkflowModel#clock} seconds, which moves on 100 s at a time: a lease of 60 s runs out at the
 * next move, one of 250 s at the third. The other functions read the database's clock, which does
 * not move with the test's, so a sleep or a wait's timeout of 150 s of the test's time asks for the
 * test's clock plus 150 s. The sweep takes a time: now, or two days on (every run here keeps one
 * day).
 */
final class WorkflowsAgainstModel {
  private static final AtomicInteger counter = new AtomicInteger();

  /** A sleep's or a timeout's length in the test's time: due after two moves of the clock. */
  static final int LONG = 150;

  final List<Connection> connections;
  final String workflow;
  final WorkflowModel model = new WorkflowModel();

  /** Every run this test started, swept ones too (for signals and cancels of runs gone). */
  final List<Long> startedRuns = new ArrayList<>();

  WorkflowsAgainstModel(List<Connection> connections) {
    this.connections = connections;
    this.workflow = "model_w" + ProcessHandle.current().pid() + "_" + counter.incrementAndGet();
    try (Statement s = c(0).createStatement()) {
      // Ended runs of earlier tries go, so a sweep's count is this try's alone (children go in a
      // sweep after their parents').
      while (true) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT queue.sweep_workflow_runs(100000, clock_timestamp() + interval '1000 days')")) {
          rs.next();
          if (rs.getInt(1) == 0) {
            break;
          }
        }
      }
      s.execute(
          "SELECT queue.set_concurrency_limit('" + workflow + "', " + WorkflowModel.LIMIT + ")");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String toString() {
    return "workflow " + workflow + ", runs " + model.runs.keySet();
  }

  private void act() {
    model.now++;
    model.real = System.nanoTime() / 1e9;
  }

  // ---- actions -------------------------------------------------------------------------------

  /** Moves the test's time on 100 s. */
  void advance() {
    act();
    model.clock += 100;
  }

  /**
   * Starts a run: with an idempotency key, a concurrency key, or a start {@link #LONG} seconds on,
   * each when not null.
   */
  void start(int conn, String key, String concurrencyKey, boolean later) throws SQLException {
    act();
    String timing = "{}";
    if (concurrencyKey != null || later) {
      timing =
          "{"
              + (concurrencyKey == null ? "" : "\"concurrencyKey\": \"" + concurrencyKey + "\"")
              + (concurrencyKey != null && later ? ", " : "")
              + (later ? "\"delayMs\": " + (model.clock + LONG) * 1000L : "")
              + "}";
    }
    long id;
    String status;
    boolean created;
    try (PreparedStatement ps =
        c(conn)
            .prepareStatement(
                "SELECT run_id, status, created FROM queue.workflow_start(?, '1'::jsonb, NULL, ?, 1,"
                    + " NULL, NULL, nullif(?::jsonb, '{}'))")) {
      ps.setString(1, workflow);
      ps.setString(2, key);
      ps.setString(3, timing);
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
      model.started(id, key, concurrencyKey, later ? model.clock + LONG : 0);
      startedRuns.add(id);
    }
  }

  /** What the model expects of one task a poll hands out. */
  private record Expected(Run run, int attempt, String reason, List<String> journal) {}

  /**
   * Polls as workflow_poll does it, in the model first: up to three rounds of receiving due tasks
   * oldest first and taking those of unkeyed runs, then of keyed runs in key order: a paused run's
   * task parked; a timed-out wait journaled; a keyed run admitted, or parked in its key's line.
   */
  void poll(int conn, int qty, boolean longLease) throws SQLException {
    act();
    int leaseSeconds = longLease ? 250 : 60;
    List<Expected> expected = new ArrayList<>();
    int n = 0;
    String lastKey = null;
    for (int round = 1; ; round++) {
      int parked = 0;
      int held = 0;
      // Received oldest first; taken unkeyed first as received (by message id), then by key.
      List<Run> cands =
          model.runs.values().stream()
              .filter(model::due)
              .sorted(model.dueOrder())
              .limit(qty - n)
              .sorted(
                  Comparator.<Run, Boolean>comparing(r -> r.concurrencyKey != null)
                      .thenComparing(r -> r.concurrencyKey == null ? "" : r.concurrencyKey)
                      .thenComparingLong(r -> r.born))
              .toList();
      cands.forEach(r -> model.received(r, leaseSeconds));
      for (Run r : cands) {
        if (r.paused) {
          r.attempts--;
          model.parkPaused(r);
          parked++;
          continue;
        }
        if ("timeout".equals(r.reason) && r.waitStep != null) {
          r.journal.add(new Step(r.waitStep, 1));
          r.waitStep = null;
          r.waitEvent = null;
        }
        if (r.concurrencyKey != null) {
          held++;
          if (lastKey != null && r.concurrencyKey.compareTo(lastKey) < 0) {
            r.attempts--;
            model.visibleAt(r, 0);
            continue;
          }
          lastKey = r.concurrencyKey;
          if (!model.admit(r)) {
            r.attempts--;
            continue;
          }
          held--;
        }
        n++;
        expected.add(new Expected(r, r.attempts, r.reason, names(r)));
      }
      if ((held == 0 && parked == 0) || n >= qty || round >= 3) {
        break;
      }
    }

    List<long[]> got = new ArrayList<>();
    List<String[]> seen = new ArrayList<>();
    try (PreparedStatement ps =
        c(conn)
            .prepareStatement(
                "SELECT run_id, msg_id, receipt, attempt, reason, journal FROM"
                    + " queue.workflow_poll(?, '{1}', ?, ?, NULL,"
                    + " clock_timestamp() + make_interval(secs => ?))")) {
      ps.setString(1, workflow);
      ps.setInt(2, qty);
      ps.setInt(3, leaseSeconds);
      ps.setLong(4, model.clock);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          got.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getInt(4)});
          seen.add(new String[] {rs.getString(5), rs.getString(6)});
        }
      }
    }
    Statistics.label("tasks handed out").collect(got.size());
    assertThat(got.stream().map(t -> t[0]).toList())
        .as("runs handed out, in order")
        .isEqualTo(expected.stream().map(e -> e.run().id).toList());
    for (int i = 0; i < got.size(); i++) {
      long[] t = got.get(i);
      Expected e = expected.get(i);
      Run r = e.run();
      if (r.msg != null) {
        assertThat(t[1]).as("run %d's message", r.id).isEqualTo(r.msg);
      } else {
        assertThat(model.held).as("a new task is a new message").noneMatch(h -> h.msg() == t[1]);
      }
      assertThat(model.held)
          .as("a new lease, a new receipt")
          .noneMatch(h -> h.msg() == t[1] && h.receipt() == t[2]);
      assertThat((int) t[3]).as("attempt of run %d", r.id).isEqualTo(e.attempt());
      assertThat(seen.get(i)[0]).as("reason of run %d's task", r.id).isEqualTo(e.reason());
      assertThat(stepNames(seen.get(i)[1])).as("journal of run %d", r.id).isEqualTo(e.journal());
      model.handedOut(r, t[1], t[2]);
    }
  }

  /** How a step completion sends the run on. */
  enum Next {
    SLEEP,
    SLEEP_LONG,
    WAIT_E,
    WAIT_E_TIMED,
    WAIT_F,
    WAIT_CHILD,
    COMPLETED,
    FAILED
  }

  /**
   * Completes a step of the {@code task}th task handed out: the run's next step, or with {@code
   * repeat} the step it journaled last (as a worker's retry after a lost answer, or a body that is
   * not deterministic, sends it); alone, or with {@code batch} as the one item of a batch.
   */
  void complete(int conn, int task, Next next, boolean repeat, boolean batch) throws SQLException {
    act();
    Held h = held(task);
    if (h == null) {
      return;
    }
    Run r = model.runs.get(h.run());
    String event =
        switch (next) {
          case WAIT_E, WAIT_E_TIMED -> "e";
          case WAIT_CHILD ->
              r == null || r.children.isEmpty()
                  ? "f"
                  : "__child." + r.children.lastEntry().getValue();
          default -> "f";
        };
    Double timeout = next == Next.WAIT_E_TIMED ? (double) model.clock + LONG : null;
    String nextJson =
        switch (next) {
          case SLEEP -> "{\"delayMs\": 0}";
          case SLEEP_LONG -> "{\"delayMs\": " + (model.clock + LONG) * 1000L + "}";
          case WAIT_E, WAIT_E_TIMED, WAIT_F, WAIT_CHILD ->
              "{\"wait\": {\"step\": \"w"
                  + (r == null ? 0 : r.journal.size() + 1)
                  + "\", \"event\": \""
                  + event
                  + "\"}"
                  + (timeout == null ? "" : ", \"delayMs\": " + (long) (timeout * 1000))
                  + "}";
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
      assertSqlState(() -> call(conn, sql, h, stepName, nextJson, result), "P0002");
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
      case SLEEP, SLEEP_LONG -> {
        model.newTask(r, "resume", next == Next.SLEEP ? 0 : model.clock + LONG);
        model.releaseSlot(r);
      }
      case WAIT_E, WAIT_E_TIMED, WAIT_F, WAIT_CHILD -> model.beginWait(r, event, timeout);
      case COMPLETED -> model.end(r, Status.completed);
      case FAILED -> model.end(r, Status.failed);
    }
    Statistics.label("waits").collect(next.name() + (r.waitStep == null ? "" : " waiting"));
    if (r.status == Status.running) {
      assertThat(got[1] != null).as("run %d has a next task", r.id).isEqualTo(r.hasTask);
    }
  }

  void retry(int conn, int task) throws SQLException {
    act();
    Held h = held(task);
    if (h == null) {
      return;
    }
    Run r = model.runs.get(h.run());
    String sql = "SELECT queue.workflow_retry(?, ?, ?, 0)";
    if (r == null) {
      assertSqlState(() -> callRetry(conn, sql, h), "P0002");
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
      r.receipt = null;
      model.visibleAt(r, 0);
    }
  }

  /** The holder of a task ends its run and starts the run's successor with a fresh journal. */
  void continueAsNew(int conn, int task) throws SQLException {
    act();
    Held h = held(task);
    if (h == null) {
      return;
    }
    Run r = model.runs.get(h.run());
    String sql = "SELECT outcome, continued_to FROM queue.workflow_continue_as_new(?, ?, ?, '2')";
    if (r == null) {
      assertSqlState(() -> callHeld(conn, sql, h), "P0002");
      return;
    }
    String[] got = callHeld(conn, sql, h);
    Statistics.label("continuations").collect(got[0]);
    if (r.status != Status.running) {
      assertThat(got[0]).isEqualTo("not_running");
      assertThat(got[1]).isEqualTo(r.continuedTo == null ? null : r.continuedTo.toString());
      return;
    }
    if (!model.holds(r, h)) {
      assertThat(got[0]).as("continuation with a stale receipt %s", h).isEqualTo("stale");
      return;
    }
    assertThat(got[0]).as("continuation of run %d", r.id).isEqualTo("ok");
    long next = Long.parseLong(got[1]);
    assertThat(model.runs).doesNotContainKey(next);
    String key = r.key;
    r.key = null;
    Run s = model.started(next, key, r.concurrencyKey, 0);
    startedRuns.add(next);
    s.parent = r.parent;
    s.chainFirst = r.known();
    s.paused = r.paused;
    for (Signal sig : new ArrayList<>(r.inbox)) {
      if (!sig.delivered) {
        r.inbox.remove(sig);
        s.inbox.add(sig);
      }
    }
    r.chainFirst = r.known();
    r.continuedTo = next;
    model.end(r, Status.completed);
  }

  /** Starts a child run from the run of the {@code task}th task, for the parent's next step. */
  void startChild(int conn, int task) throws SQLException {
    act();
    Held h = held(task);
    if (h == null) {
      return;
    }
    Run p = model.runs.get(h.run());
    String step = "c" + (p == null ? 0 : p.journal.size());
    String sql =
        "SELECT run_id, status, created FROM queue.workflow_start_child(?, ?, '"
            + workflow
            + "', '1'::jsonb)";
    if (p == null) {
      assertSqlState(() -> callChild(conn, sql, h.run(), step), "P0002");
      return;
    }
    String key = "__child/" + p.id + "/" + step;
    Run existing = model.byKey(key);
    if (existing == null && p.status != Status.running) {
      assertSqlState(() -> callChild(conn, sql, h.run(), step), "WF002");
      return;
    }
    String[] got = callChild(conn, sql, h.run(), step);
    Statistics.label("children").collect(existing == null ? "started" : "found");
    if (existing != null) {
      assertThat(got)
          .as("the child of step %s of run %d", step, p.id)
          .containsExactly(Long.toString(existing.known()), existing.status.name(), "f");
      return;
    }
    long id = Long.parseLong(got[0]);
    assertThat(got[2]).isEqualTo("t");
    assertThat(model.runs).doesNotContainKey(id);
    Run c = model.started(id, key, null, 0);
    c.parent = p.id;
    p.children.put(step, id);
    startedRuns.add(id);
  }

  void signal(int conn, int run, String event, String key) throws SQLException {
    act();
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
    String expected;
    while (true) {
      Run at = r;
      if (at == null) {
        expected = "no such run";
      } else if (key != null && at.inbox.stream().anyMatch(s -> key.equals(s.key))) {
        expected = "duplicate";
      } else if (at.status == Status.running) {
        expected = model.send(at, event, key);
      } else {
        Run l = model.last(at);
        if (l != at) {
          r = l;
          continue;
        }
        expected = "not running";
      }
      break;
    }
    assertThat(outcome).as("signal %s to run %d", event, runId).isEqualTo(expected);
  }

  void cancel(int conn, int run) throws SQLException {
    act();
    long runId = runId(run);
    Run r = model.runs.get(runId);
    String sql = "SELECT cancelled, status FROM queue.workflow_cancel(?)";
    if (r == null) {
      assertSqlState(() -> callCancel(conn, sql, runId), "P0002");
      return;
    }
    String[] got = callCancel(conn, sql, runId);
    boolean cancelled = model.cancel(r);
    Run l = model.last(r);
    assertThat(got).containsExactly(cancelled ? "t" : "f", l.status.name());
  }

  /** Pauses or resumes a run. */
  void pause(int conn, int run, boolean paused) throws SQLException {
    act();
    long runId = runId(run);
    Run r = model.runs.get(runId);
    String sql = "SELECT queue.workflow_run_pause(?, " + paused + ")";
    if (r == null || (paused && r.status != Status.running)) {
      assertSqlState(() -> callRun(conn, sql, runId), r == null ? "P0002" : "WF003");
      return;
    }
    assertThat(callRun(conn, sql, runId)).isEqualTo(workflow);
    Statistics.label("pauses").collect((paused ? "pause" : "resume") + (r.paused ? " paused" : ""));
    if (paused) {
      r.paused = true;
    } else if (r.paused) {
      r.paused = false;
      if (r.parked()) {
        model.visibleAt(r, 0);
      }
    }
  }

  void sweep(int conn, boolean twoDaysOn) throws SQLException {
    act();
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

  /**
   * The {@code task}th task handed out, or null when there is none: a shrunk sequence may have
   * dropped the poll that handed it out.
   */
  private Held held(int task) {
    return model.held.isEmpty() ? null : model.held.get(Math.min(task, model.held.size() - 1));
  }

  /** The call fails with this SQLSTATE. */
  private static void assertSqlState(ThrowingCallable call, String state) {
    assertThatThrownBy(call)
        .isInstanceOf(SQLException.class)
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo(state);
  }

  /** The id of the {@code run}th run started, or of one that never was for -1. */
  private long runId(int run) {
    // A shrunk sequence may have dropped the start this index counted on.
    return run < 0 || startedRuns.isEmpty()
        ? Long.MAX_VALUE / 2
        : startedRuns.get(Math.min(run, startedRuns.size() - 1));
  }

  // ---- invariants ----------------------------------------------------------------------------

  record RunRow(
      long id,
      String status,
      String key,
      Long msg,
      String waitEvent,
      boolean paused,
      boolean slot,
      Long parent,
      Long continuedTo,
      Long chainFirst) {}

  record MsgRow(
      long id,
      long run,
      int readCount,
      boolean notDue,
      boolean parked,
      long receipt,
      boolean head) {}

  /** After every step: the run rows, journals, inboxes, key lines and the queue match the model. */
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
                "SELECT run_id, status, idempotency_key, current_msg_id, wait_event,"
                    + " paused_at IS NOT NULL, coalesce(slot_held, false), parent_run_id,"
                    + " continued_to, chain_first"
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
                  rs.getString(5),
                  rs.getBoolean(6),
                  rs.getBoolean(7),
                  (Long) rs.getObject(8),
                  (Long) rs.getObject(9),
                  (Long) rs.getObject(10)));
        }
      }
    }
    assertThat(rows.stream().map(RunRow::id).toList())
        .as("runs of %s", workflow)
        .containsExactlyElementsOf(model.runs.keySet());
    Map<Long, MsgRow> msgs = messages();
    Map<Long, Boolean> lines = lines();
    for (RunRow row : rows) {
      Run r = model.runs.get(row.id());
      assertThat(row.status()).as("status of run %d", r.id).isEqualTo(r.status.name());
      assertThat(row.key()).as("idempotency key of run %d", r.id).isEqualTo(r.key);
      assertThat(row.waitEvent()).as("wait of run %d", r.id).isEqualTo(r.waitEvent);
      assertThat(row.msg() != null).as("run %d has a task", r.id).isEqualTo(r.hasTask);
      assertThat(row.paused()).as("run %d is paused", r.id).isEqualTo(r.paused);
      assertThat(row.slot()).as("run %d holds a slot", r.id).isEqualTo(r.slot);
      assertThat(row.parent()).as("parent of run %d", r.id).isEqualTo(r.parent);
      assertThat(row.continuedTo()).as("successor of run %d", r.id).isEqualTo(r.continuedTo);
      assertThat(row.chainFirst()).as("chain of run %d", r.id).isEqualTo(r.chainFirst);
      assertThat(lines.get(r.id))
          .as("run %d in its key's line (woken)", r.id)
          .isEqualTo(r.waiting ? (Boolean) r.woken : null);
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
        assertThat(m.notDue()).as("run %d's task is not due", r.id).isEqualTo(!model.due(r));
        assertThat(m.parked()).as("run %d's task is parked", r.id).isEqualTo(r.parked());
        if (r.receipt != null) {
          assertThat(m.receipt())
              .as("run %d's receipt (%s, clock %d)", r.id, m, model.clock)
              .isEqualTo(r.receipt);
        }
      }
    }
    assertThat(lines.keySet())
        .as("runs in key lines")
        .allMatch(id -> model.runs.containsKey(id) && model.runs.get(id).waiting);
    // Nothing else is on the queue: each running run with a task has exactly one message.
    assertThat(msgs.keySet())
        .as("messages of %s", workflow)
        .containsExactlyInAnyOrderElementsOf(
            rows.stream().map(RunRow::msg).filter(Objects::nonNull).toList());
    // No key has more runs holding slots than its limit, and none has a free slot no woken run
    // will take while a run of it stays parked.
    for (String key : List.of("a", "b")) {
      assertThat(model.active(key)).as("runs of key %s holding a slot", key).isLessThanOrEqualTo(1);
      boolean kept =
          model.runs.values().stream()
              .anyMatch(w -> w.waiting && w.woken && key.equals(w.concurrencyKey));
      if (model.active(key) < WorkflowModel.LIMIT && !kept) {
        assertThat(model.runs.values())
            .as("runs of key %s parked while a slot is free", key)
            .noneMatch(w -> w.waiting && w.parked() && key.equals(w.concurrencyKey));
      }
    }
  }

  private Map<Long, MsgRow> messages() throws SQLException {
    Map<Long, MsgRow> out = new HashMap<>();
    try (Statement s = c(0).createStatement()) {
      if (!exists(s)) {
        return out;
      }
      try (ResultSet rs =
          s.executeQuery(
              "SELECT msg_id, group_id::bigint, read_ct,"
                  + " vt > clock_timestamp() + make_interval(secs => "
                  + model.clock
                  + "), vt = queue.parked_vt(), queue.receipt_of(vt), head FROM queue.\"q___wf_"
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
                  rs.getBoolean(5),
                  rs.getLong(6),
                  rs.getBoolean(7)));
        }
      }
    }
    return out;
  }

  /** The runs in their key's line, and whether each was woken. */
  private Map<Long, Boolean> lines() throws SQLException {
    Map<Long, Boolean> out = new HashMap<>();
    try (PreparedStatement ps =
        c(0).prepareStatement(
                "SELECT run_id, woken FROM queue.concurrency_wait WHERE workflow_name = ?")) {
      ps.setString(1, workflow);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(rs.getLong(1), rs.getBoolean(2));
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

  private String[] callHeld(int conn, String sql, Held h) throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setLong(1, h.run());
      ps.setLong(2, h.msg());
      ps.setLong(3, h.receipt());
      ResultSet rs = single(ps);
      return new String[] {rs.getString(1), rs.getString(2)};
    }
  }

  private String[] callChild(int conn, String sql, long parent, String step) throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setLong(1, parent);
      ps.setString(2, step);
      ResultSet rs = single(ps);
      return new String[] {rs.getString(1), rs.getString(2), rs.getString(3)};
    }
  }

  private String callRun(int conn, String sql, long run) throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement(sql)) {
      ps.setLong(1, run);
      return single(ps).getString(1);
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
