package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One cell of PostgreSQL under pressure: a server, two worker JVMs serving {@link ScaleOutWorkflow}
 * and steady starts (40 a second unless a disturbance changes the rate), in three phases: before,
 * while a disturbance of the database lasts, and after it ends. It measures each phase's
 * throughput, the start-to-end p99 of the runs started in it, the longest a start call took and the
 * dead rows the hot tables hold at its end, prints them, and checks that every acknowledged start
 * completed once with its answer and its three steps.
 */
final class PressureCell {
  static final int STEADY_STARTS_PER_SECOND = 40;

  /** Start calls in flight at most; past it the producer falls behind the rate it was given. */
  private static final int IN_FLIGHT = 64;

  /** The cell's own session (for the dead rows), which a disturbance leaves alone. */
  static final String APPLICATION_NAME = "pressure-cell";

  /** Something done to the database (or to the load) for a while: begun, held, ended. */
  interface Disturbance {
    /** Done once the workers are warm, before the first phase (to measure what the cell bears). */
    default void prepare(Target target) throws Exception {}

    void begin(Target target) throws Exception;

    void end() throws Exception;
  }

  /**
   * What a disturbance may act on: the database, the server's URL, and the rate of starts a second
   * (which it may raise or lower).
   */
  record Target(TestDatabase db, String serverUrl, AtomicInteger startsPerSecond) {}

  /**
   * What a phase did: runs started, their start-to-end p99, the longest a start call took (answered
   * or refused), and dead rows at its end.
   */
  record Phase(
      String name,
      int runs,
      double seconds,
      long p99Ms,
      long slowestStartMs,
      Map<String, Long> dead) {
    double perSecond() {
      return runs / seconds;
    }
  }

  /**
   * The phases, before first; the refused starts by what refused them; how long after the last
   * phase the last acknowledged run completed; and how long after the disturbance ended a start was
   * last refused (0 when none was).
   */
  record Result(
      List<Phase> phases, Map<String, Integer> refusals, long drainMs, long refusedAfterMs) {
    Phase phase(String name) {
      return phases.stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
    }
  }

  private PressureCell() {}

  /** Runs the three phases around {@code disturbance}, on a fresh database. */
  static Result run(
      Path dir, String what, Duration before, Duration during, Duration after, Disturbance d)
      throws Exception {
    return run(dir, what, TestDatabase.fresh(), before, during, after, d);
  }

  /** Runs the three phases around {@code disturbance}, on {@code db}. */
  static Result run(
      Path dir,
      String what,
      TestDatabase db,
      Duration before,
      Duration during,
      Duration after,
      Disturbance d)
      throws Exception {
    try (TestServer server = TestServer.start(db, Map.of())) {
      List<Process> workers = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) {
          workers.add(
              ChildJvm.start(
                  ScaleOutWorkflow.class,
                  dir.resolve("worker-" + i + ".out"),
                  Map.of(),
                  "http",
                  server.url()));
        }
        WorkflowClient client = WorkflowClient.connect(server.url());
        Map<Long, Integer> acked = new ConcurrentHashMap<>();
        Map<Long, String> phaseOf = new ConcurrentHashMap<>();
        Map<String, Integer> refusals = new ConcurrentHashMap<>();
        Map<String, Long> slowest = new ConcurrentHashMap<>();
        AtomicLong lastRefusal = new AtomicLong(Long.MIN_VALUE);
        AtomicReference<String> phase = new AtomicReference<>("warm-up");
        AtomicBoolean producing = new AtomicBoolean(true);
        AtomicInteger rate = new AtomicInteger(STEADY_STARTS_PER_SECOND);
        Thread producer =
            producer(
                client, acked, phaseOf, refusals, slowest, lastRefusal, phase, rate, producing);
        Map<String, Duration> lengths = new LinkedHashMap<>();
        lengths.put("before", before);
        lengths.put("during", during);
        lengths.put("after", after);
        Map<String, Map<String, Long>> dead = new LinkedHashMap<>();
        long drainMs;
        long ended;
        try {
          Thread.sleep(5_000); // workers up and warm
          phase.set("prepare");
          d.prepare(new Target(db, server.url(), rate));
          phase.set("before");
          Thread.sleep(before.toMillis());
          dead.put("before", deadRows(db));
          phase.set("during");
          d.begin(new Target(db, server.url(), rate));
          try {
            Thread.sleep(during.toMillis());
            dead.put("during", deadRows(db));
          } finally {
            d.end();
            ended = System.nanoTime();
          }
          phase.set("after");
          Thread.sleep(after.toMillis());
          producing.set(false);
          producer.join();
          long t0 = System.nanoTime();
          awaitAll(db, acked.keySet());
          drainMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
          dead.put("after", deadRows(db));
        } finally {
          producing.set(false);
          producer.join();
        }
        List<Phase> phases = new ArrayList<>();
        for (Map.Entry<String, Duration> e : lengths.entrySet()) {
          List<Long> latencies = latencies(db, phaseOf, e.getKey());
          phases.add(
              new Phase(
                  e.getKey(),
                  latencies.size(),
                  e.getValue().toMillis() / 1000.0,
                  p99(latencies),
                  slowest.getOrDefault(e.getKey(), 0L),
                  dead.get(e.getKey())));
        }
        for (Phase p : phases) {
          System.out.printf(
              "%s, %s: %d runs, %.1f runs/s, start to end p99 %d ms, slowest start call %d ms,"
                  + " dead rows %s%n",
              what, p.name(), p.runs(), p.perSecond(), p.p99Ms(), p.slowestStartMs(), p.dead());
        }
        assertEachRanOnce(db, acked);
        System.out.printf(
            "%s: %d starts acknowledged, refused %s, the last completed %d ms after the phases%n",
            what, acked.size(), refusals, drainMs);
        long refusedAfterMs =
            lastRefusal.get() == Long.MIN_VALUE
                ? 0
                : Math.max(0, TimeUnit.NANOSECONDS.toMillis(lastRefusal.get() - ended));
        System.out.printf(
            "%s: the last start refused %d ms after the disturbance ended%n", what, refusedAfterMs);
        return new Result(phases, refusals, drainMs, refusedAfterMs);
      } finally {
        for (Process w : workers) {
          ChildJvm.kill(w);
        }
      }
    }
  }

  /**
   * The phases during and after the disturbance kept 0.9 of the throughput before it, and a
   * start-to-end p99 under twice the one before (or that plus 500 ms, when it is short).
   */
  static void assertHeld(Result r) {
    List<Phase> phases = r.phases();
    Phase before = phases.get(0);
    for (Phase p : phases.subList(1, phases.size())) {
      assertThat(p.perSecond())
          .as("%s: runs a second against %.1f before", p.name(), before.perSecond())
          .isGreaterThan(before.perSecond() * 0.9);
      assertThat(p.p99Ms())
          .as("%s: start-to-end p99 against %d ms before", p.name(), before.p99Ms())
          .isLessThan(Math.max(2 * before.p99Ms(), before.p99Ms() + 500));
    }
  }

  /**
   * Starts runs at {@code rate} a second from a pool of {@link #IN_FLIGHT} callers, recording each
   * acknowledged run with its input and phase, each refusal by kind, and the slowest call per
   * phase.
   */
  private static Thread producer(
      WorkflowClient client,
      Map<Long, Integer> acked,
      Map<Long, String> phaseOf,
      Map<String, Integer> refusals,
      Map<String, Long> slowest,
      AtomicLong lastRefusal,
      AtomicReference<String> phase,
      AtomicInteger rate,
      AtomicBoolean producing) {
    AtomicInteger inputs = new AtomicInteger();
    ExecutorService callers = Executors.newFixedThreadPool(IN_FLIGHT);
    Semaphore slots = new Semaphore(IN_FLIGHT);
    Thread t =
        new Thread(
            () -> {
              try {
                long next = System.nanoTime();
                while (producing.get()) {
                  slots.acquire();
                  int n = inputs.incrementAndGet();
                  callers.execute(
                      () -> {
                        String in = phase.get();
                        long t0 = System.nanoTime();
                        try {
                          long id = client.start(ScaleOutWorkflow.NAME, n).runId();
                          acked.put(id, n);
                          phaseOf.put(id, in);
                        } catch (RuntimeException e) {
                          refusals.merge(SteadyStarts.kind(e), 1, Integer::sum); // not acknowledged
                          lastRefusal.set(System.nanoTime());
                        } finally {
                          slowest.merge(
                              in, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), Math::max);
                          slots.release();
                        }
                      });
                  next += TimeUnit.SECONDS.toNanos(1) / rate.get();
                  long wait = next - System.nanoTime();
                  if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                  } else if (wait < -TimeUnit.SECONDS.toNanos(1)) {
                    next = System.nanoTime(); // fallen behind the rate: no catching up in a burst
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                callers.shutdown();
                try {
                  callers.awaitTermination(2, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            },
            "producer");
    t.start();
    return t;
  }

  /** Waits (up to three minutes) until the runs {@code ids} have completed. */
  static void awaitAll(TestDatabase db, Set<Long> ids) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    int runs = ids.size();
    try (Connection c = db.connect();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT count(*) FROM queue.workflow_run"
                    + " WHERE status = 'completed' AND run_id = ANY (?)")) {
      s.setArray(1, c.createArrayOf("bigint", ids.toArray()));
      while (true) {
        long done;
        try (ResultSet rs = s.executeQuery()) {
          rs.next();
          done = rs.getLong(1);
        }
        if (done >= runs) {
          return;
        }
        assertThat(System.nanoTime())
            .as("%d of %d runs completed after three minutes", done, runs)
            .isLessThan(deadline);
        Thread.sleep(200);
      }
    }
  }

  /**
   * Every acknowledged run completed with the answer its input gives, after exactly the steps a, b
   * and c in that order; and no run exists that was not acknowledged or refused.
   */
  static void assertEachRanOnce(TestDatabase db, Map<Long, Integer> acked) throws Exception {
    Map<Long, String> seen = new HashMap<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT r.run_id, r.status::text, r.output::text, r.input::text,"
                    + " (SELECT string_agg(step_name, ',' ORDER BY seq) FROM queue.workflow_step"
                    + "   WHERE run_id = r.run_id)"
                    + " FROM queue.workflow_run r WHERE r.workflow_name = '"
                    + ScaleOutWorkflow.NAME
                    + "'")) {
      while (rs.next()) {
        long id = rs.getLong(1);
        Integer n = acked.get(id);
        if (n == null) {
          continue; // a start whose answer was lost on the way back: not acknowledged
        }
        seen.put(id, rs.getString(2) + " " + rs.getString(3) + " " + rs.getString(5));
        assertThat(rs.getString(4)).as("run %d's input", id).isEqualTo(Integer.toString(n));
      }
    }
    for (Map.Entry<Long, Integer> e : acked.entrySet()) {
      assertThat(seen.get(e.getKey()))
          .as("acknowledged run %d", e.getKey())
          .isEqualTo("completed " + ScaleOutWorkflow.expected(e.getValue()) + " a,b,c");
    }
  }

  /** Start-to-end milliseconds of the runs started in {@code phase}, from the run rows. */
  private static List<Long> latencies(TestDatabase db, Map<Long, String> phaseOf, String phase)
      throws Exception {
    List<Long> out = new ArrayList<>();
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT run_id, (extract(epoch FROM completed_at - started_at) * 1000)::bigint"
                    + " FROM queue.workflow_run WHERE status = 'completed'")) {
      while (rs.next()) {
        if (phase.equals(phaseOf.get(rs.getLong(1)))) {
          out.add(rs.getLong(2));
        }
      }
    }
    return out;
  }

  private static long p99(List<Long> xs) {
    List<Long> s = xs.stream().sorted().toList();
    return s.isEmpty() ? 0 : s.get(Math.min(s.size() - 1, (int) Math.ceil(s.size() * 0.99) - 1));
  }

  /**
   * Dead rows of the hot tables: the runs, the journal and the workflow's queue; none when the
   * database cannot be reached. Read on a session of its own, named {@link #APPLICATION_NAME} from
   * its first moment, which disturbances leave alone.
   */
  private static Map<String, Long> deadRows(TestDatabase db) throws Exception {
    Map<String, Long> out = new LinkedHashMap<>();
    String url =
        db.jdbcUrl()
            + (db.jdbcUrl().contains("?") ? "&" : "?")
            + "ApplicationName="
            + APPLICATION_NAME;
    try (Connection c = DriverManager.getConnection(url, db.user(), db.password());
        Statement s = c.createStatement()) {
      try (ResultSet rs =
          s.executeQuery(
              "SELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE schemaname = 'queue'"
                  + " AND relname IN ('workflow_run', 'workflow_step', 'q___wf_"
                  + ScaleOutWorkflow.NAME
                  + "') ORDER BY relname")) {
        while (rs.next()) {
          out.put(rs.getString(1), rs.getLong(2));
        }
      }
    } catch (SQLException e) {
      return Map.of(); // the database is away: nothing to read
    }
    return out;
  }
}
