package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.WorkflowException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One cell of PostgreSQL under pressure: a server, two worker JVMs serving {@link ScaleOutWorkflow}
 * and a steady 40 starts a second, in three phases: before, while a disturbance of the database
 * lasts, and after it ends. It measures each phase's throughput, the start-to-end p99 of the runs
 * started in it and the dead rows the hot tables hold at its end, prints them, and checks that
 * every acknowledged start completed once with its answer.
 */
final class PressureCell {
  private static final long START_EVERY_MS = 25;

  /** The cell's own session (for the dead rows), which a disturbance leaves alone. */
  static final String APPLICATION_NAME = "pressure-cell";

  /** Something done to the database for a while: begun, held, ended. */
  interface Disturbance {
    void begin(TestDatabase db) throws Exception;

    void end() throws Exception;
  }

  /** What a phase did: runs started, their start-to-end p99, and dead rows at its end. */
  record Phase(String name, int runs, double seconds, long p99Ms, Map<String, Long> dead) {
    double perSecond() {
      return runs / seconds;
    }
  }

  /** The phases, before first, and the refused starts by what refused them. */
  record Result(List<Phase> phases, Map<String, Integer> refusals) {}

  private PressureCell() {}

  /** Runs the three phases around {@code disturbance}. */
  static Result run(
      Path dir, String what, Duration before, Duration during, Duration after, Disturbance d)
      throws Exception {
    TestDatabase db = TestDatabase.fresh();
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
        AtomicReference<String> phase = new AtomicReference<>("warm-up");
        AtomicBoolean producing = new AtomicBoolean(true);
        Thread producer = producer(client, acked, phaseOf, refusals, phase, producing);
        Map<String, Duration> lengths = new LinkedHashMap<>();
        lengths.put("before", before);
        lengths.put("during", during);
        lengths.put("after", after);
        Map<String, Map<String, Long>> dead = new LinkedHashMap<>();
        try (Connection stats = db.connect()) {
          try (Statement s = stats.createStatement()) {
            s.execute("SET application_name = '" + APPLICATION_NAME + "'");
          }
          Thread.sleep(5_000); // workers up and warm
          phase.set("before");
          Thread.sleep(before.toMillis());
          dead.put("before", deadRows(stats));
          d.begin(db);
          try {
            phase.set("during");
            Thread.sleep(during.toMillis());
            dead.put("during", deadRows(stats));
          } finally {
            d.end();
          }
          phase.set("after");
          Thread.sleep(after.toMillis());
          producing.set(false);
          producer.join();
          awaitAll(client, acked);
          dead.put("after", deadRows(stats));
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
                  dead.get(e.getKey())));
        }
        for (Phase p : phases) {
          System.out.printf(
              "%s, %s: %d runs, %.1f runs/s, start to end p99 %d ms, dead rows %s%n",
              what, p.name(), p.runs(), p.perSecond(), p.p99Ms(), p.dead());
        }
        for (Map.Entry<Long, Integer> e : acked.entrySet()) {
          RunInfo run = client.get(ScaleOutWorkflow.NAME, e.getKey());
          assertThat(run.output().asInt())
              .as("run %d", e.getKey())
              .isEqualTo(ScaleOutWorkflow.expected(e.getValue()));
          assertThat(client.steps(ScaleOutWorkflow.NAME, e.getKey()))
              .extracting(StepInfo::name)
              .containsExactly("a", "b", "c");
        }
        System.out.printf("%s: refused starts %s%n", what, refusals);
        return new Result(phases, refusals);
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

  private static Thread producer(
      WorkflowClient client,
      Map<Long, Integer> acked,
      Map<Long, String> phaseOf,
      Map<String, Integer> refusals,
      AtomicReference<String> phase,
      AtomicBoolean producing) {
    AtomicInteger inputs = new AtomicInteger();
    Thread t =
        new Thread(
            () -> {
              long next = System.nanoTime();
              while (producing.get()) {
                int n = inputs.incrementAndGet();
                try {
                  long id = client.start(ScaleOutWorkflow.NAME, n).runId();
                  acked.put(id, n);
                  phaseOf.put(id, phase.get());
                } catch (ApiException e) {
                  refusals.merge("HTTP " + e.status(), 1, Integer::sum); // not acknowledged
                } catch (WorkflowException e) {
                  // The SDK's answer for a server it could not reach or that could not serve (502
                  // to 504): retry with the same idempotency key. Not acknowledged.
                  refusals.merge("WorkflowException", 1, Integer::sum);
                } catch (RuntimeException e) {
                  refusals.merge(e.getClass().getName(), 1, Integer::sum); // not acknowledged
                }
                next += TimeUnit.MILLISECONDS.toNanos(START_EVERY_MS);
                long wait = next - System.nanoTime();
                if (wait > 0) {
                  try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              }
            },
            "producer");
    t.start();
    return t;
  }

  private static void awaitAll(WorkflowClient client, Map<Long, Integer> acked)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    for (long id : acked.keySet()) {
      while (client.get(ScaleOutWorkflow.NAME, id).status() != RunStatus.COMPLETED) {
        assertThat(System.nanoTime()).as("run %d unfinished after 60 s", id).isLessThan(deadline);
        Thread.sleep(50);
      }
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

  /** Dead rows of the hot tables: the runs, the journal and the workflow's queue. */
  private static Map<String, Long> deadRows(Connection c) throws Exception {
    Map<String, Long> out = new LinkedHashMap<>();
    try (Statement s = c.createStatement()) {
      s.execute("SELECT pg_stat_clear_snapshot()");
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
    }
    return out;
  }
}
