package dev.pgworkflows.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One workload of ours, warmed up and then measured round by round with the CPU split between this
 * JVM (server, workers and load generator) and PostgreSQL; for comparing two builds run after run,
 * alternating, where the full benchmark is too coarse. Not part of the benchmark's table.
 *
 * <ul>
 *   <li>{@code java -cp bench/target/bench.jar dev.pgworkflows.bench.Probe queue [clients]
 *       [rounds]}: send → receive → delete cycles, 5 s a round;
 *   <li>{@code ... Probe burn [runs] [rounds]}: burn-downs of three-step runs;
 *   <li>{@code ... Probe steady <runs/s> <seconds>}: open-loop load, with the step-to-step and
 *       start → first step percentiles, when the slow gaps happened, and the statements' mean and
 *       worst time in PostgreSQL;
 *   <li>{@code ... Probe split <runs> <rounds>}: a pre-started burn-down in two halves, the starts
 *       (with no worker serving) and then the drain, each timed and costed apart;
 *   <li>{@code ... Probe drain <ours|dbos> <runs> <rounds>}: burn-downs with their starts and
 *       pre-started ones (the protocol's), taking turns, for either system.
 * </ul>
 *
 * <p>With {@code -Dbench.track=all -Dbench.planning=on} the queue, burn and split modes also print
 * the statements that took the most time, nested ones included, with how often each was planned
 * ({@code -Dprobe.statements=N} of them, default 25; in the steady mode, default 8). {@code
 * -Dprobe.pool=N} sets the server's connection pool (default 20, as in the benchmark); {@code
 * -Dbench.pg.<setting>=<value>} sets a PostgreSQL setting (e.g. {@code log_lock_waits}). {@code
 * -Dbench.concurrency=N} sets the workers' concurrency (default 96); {@code -Dprobe.preload=N} runs
 * a burn-down of N runs and 10 s of steady workflow load before the measured queue rounds, on the
 * same database and JVM (as the benchmark ran its queue levels until they got a contender of their
 * own). {@code -Dprobe.threads=true} adds, in the steady mode, the JVM's CPU per step by kind of
 * thread.
 */
public final class Probe {
  private Probe() {}

  public static void main(String[] args) throws Exception {
    Ours.keepConnections();
    if (args.length > 0 && args[0].equals("steady")) {
      steady(Double.parseDouble(args[1]), Double.parseDouble(args[2]));
      return;
    }
    if (args.length > 0 && args[0].equals("split")) {
      split(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
      return;
    }
    if (args.length > 0 && args[0].equals("drain")) {
      drains(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
      return;
    }
    boolean queue = args.length == 0 || args[0].equals("queue");
    int size = args.length > 1 ? Integer.parseInt(args[1]) : queue ? 4 : 5000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    try (Pg pg = new Pg();
        Ours o = new Ours(pg, Integer.getInteger("probe.pool", 20))) {
      for (int i = 0; i < (queue ? 4 : 6); i++) {
        double rate = queue ? o.queueCycles(size, 5) : 3 * 3000 / o.burnDown(3000);
        System.err.printf("warm-up %d: %.0f%n", i + 1, rate);
      }
      int preload = Integer.getInteger("probe.preload", 0);
      if (queue && preload > 0) {
        // The workflow load the benchmark runs before its queue levels, on the same database.
        System.err.printf("preload: %.0f steps/s%n", 3 * preload / o.burnDown(preload));
        o.steady(300, 10);
      }
      pg.exec("postgres", "SELECT pg_stat_statements_reset()");
      for (int i = 0; i < rounds; i++) {
        Pg.Cpu c0 = Pg.cpu();
        double units;
        double seconds;
        if (queue) {
          seconds = 5;
          units = o.queueCycles(size, seconds) * seconds;
        } else {
          seconds = o.burnDown(size);
          units = 3.0 * size;
        }
        Pg.Cpu c1 = Pg.cpu();
        if (queue) {
          System.out.printf(
              "  q_cycle%d: %d dead rows, %d vacuums so far%n",
              size,
              pg.scalar(
                  o.database(),
                  "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'q_cycle"
                      + size
                      + "'"),
              pg.scalar(
                  o.database(),
                  "SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 'q_cycle"
                      + size
                      + "'"));
        }
        double all = c1.since(c0);
        double jvm = c1.jvm() - c0.jvm();
        System.out.printf(
            "%s/s %.0f   CPU ms per %s: all %.3f  JVM %.3f  PostgreSQL %.3f%n",
            queue ? "cycles" : "steps",
            units / seconds,
            queue ? "cycle" : "step",
            all / units * 1000,
            jvm / units * 1000,
            (all - jvm) / units * 1000);
      }
      if (!"top".equals(System.getProperty("bench.track", "top"))) {
        printTopStatements(pg);
      }
    }
  }

  /** Burn-downs with their starts and pre-started ones, taking turns, after a warm-up. */
  private static void drains(String system, int n, int rounds) throws Exception {
    try (Pg pg = new Pg();
        Contender c =
            system.equals("dbos")
                ? new Dbos(pg, 20)
                : new Ours(pg, Integer.getInteger("probe.pool", 20))) {
      for (int i = 0; i < 4; i++) {
        System.err.printf("warm-up %d: %.0f steps/s%n", i + 1, 3 * 3000 / c.burnDown(3000));
      }
      for (int i = 0; i < rounds; i++) {
        for (boolean started : new boolean[] {false, true}) {
          Pg.Cpu c0 = Pg.cpu();
          double seconds = started ? c.drain(n) : c.burnDown(n);
          double cpu = Pg.cpu().since(c0);
          System.out.printf(
              "%s %-12s steps/s %6.0f   CPU ms per step (starts included) %.3f%n",
              c.name(),
              started ? "pre-started" : "with starts",
              3.0 * n / seconds,
              cpu / n / 3 * 1000);
        }
      }
    }
  }

  /**
   * The pre-started burn-down in its two halves, after the burn-down warm-up: {@code n} runs
   * started with no worker serving them, then served until done; the time and CPU of each half (per
   * start, then per step).
   */
  private static void split(int n, int rounds) throws Exception {
    try (Pg pg = new Pg();
        Ours o = new Ours(pg, Integer.getInteger("probe.pool", 20))) {
      for (int i = 0; i < 6; i++) {
        System.err.printf("warm-up %d: %.0f steps/s%n", i + 1, 3 * 3000 / o.burnDown(3000));
      }
      for (int i = 0; i < rounds; i++) {
        boolean track = i == rounds - 1 && !"top".equals(System.getProperty("bench.track", "top"));
        if (track) {
          pg.exec("postgres", "SELECT pg_stat_statements_reset()");
        }
        Pg.Cpu c0 = Pg.cpu();
        Instant from = Instant.now();
        long t0 = System.nanoTime();
        Ours.Started s = o.startOnly(n);
        double startSeconds = (System.nanoTime() - t0) / 1e9;
        // The start phase's wall-clock span, to pick its samples out of a profile.
        System.out.printf("starts from %s to %s%n", from, Instant.now());
        Pg.Cpu c1 = Pg.cpu();
        if (track) {
          System.out.println("the starts' statements:");
          printTopStatements(pg);
          pg.exec("postgres", "SELECT pg_stat_statements_reset()");
        }
        double drainSeconds = o.drainStarted(s);
        Pg.Cpu c2 = Pg.cpu();
        if (track) {
          System.out.println("the drain's statements:");
          printTopStatements(pg);
        }
        System.out.printf(
            "starts/s %.0f   CPU ms per start: all %.3f  JVM %.3f   steps/s %.0f   CPU ms per"
                + " step: all %.3f  JVM %.3f%n",
            n / startSeconds,
            c1.since(c0) / n * 1000,
            (c1.jvm() - c0.jvm()) / n * 1000,
            3.0 * n / drainSeconds,
            c2.since(c1) / (3.0 * n) * 1000,
            (c2.jvm() - c1.jvm()) / (3.0 * n) * 1000);
      }
    }
  }

  /**
   * Open-loop load at {@code rate} runs/s for {@code seconds} after the burn-down warm-up: the
   * step-to-step percentiles, when the slow gaps (over 20 ms) happened, per 250 ms, and the CPU per
   * step (JVM and PostgreSQL) over the load and its drain.
   */
  private static void steady(double rate, double seconds) throws Exception {
    try (Pg pg = new Pg();
        Ours o = new Ours(pg, Integer.getInteger("probe.pool", 20))) {
      for (int i = 0; i < 6; i++) {
        System.err.printf("warm-up %d: %.0f steps/s%n", i + 1, 3 * 3000 / o.burnDown(3000));
      }
      int steadyWarm = Integer.getInteger("probe.steadyWarmup", 0);
      if (steadyWarm > 0) {
        Bench.warmSteady(o, rate, 10, steadyWarm);
      }
      pg.exec("postgres", "SELECT pg_stat_statements_reset()");
      Map<String, Double> threads0 = ThreadCpu.now();
      Pg.Cpu c0 = Pg.cpu();
      long w0 = System.nanoTime();
      MachineBusy.Over<Recorder> run = MachineBusy.over(seconds, () -> o.steady(rate, seconds));
      Recorder r = run.result();
      double busy = run.busy();
      double wall = (System.nanoTime() - w0) / 1e9;
      Pg.Cpu c1 = Pg.cpu();
      List<Double> gaps = r.stepToStep();
      System.out.printf(
          "step-to-step ms: p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f max %.2f (%d)%n",
          Stats.percentile(gaps, 50),
          Stats.percentile(gaps, 90),
          Stats.percentile(gaps, 99),
          Stats.percentile(gaps, 99.9),
          Stats.percentile(gaps, 100),
          gaps.size());
      List<Double> first = r.startToFirstStep();
      System.out.printf(
          "start→first step ms: p50 %.2f p99 %.2f%n",
          Stats.percentile(first, 50), Stats.percentile(first, 99));
      List<long[]> timed = r.gaps();
      long t0 = timed.stream().mapToLong(g -> g[0]).min().orElse(0);
      TreeMap<Long, int[]> slow = new TreeMap<>();
      for (long[] g : timed) {
        long bucket = (g[0] - t0) / 250_000_000L;
        int[] c = slow.computeIfAbsent(bucket, k -> new int[2]);
        c[0]++;
        if (g[1] > 20_000_000L) {
          c[1]++;
        }
      }
      // The first window's start, as System.nanoTime() (the GC log's "tn" decorator) and as wall
      // time (PostgreSQL's log), to line the windows up with what else happened then.
      Instant wallT0 = Instant.now().minusNanos(System.nanoTime() - t0);
      StringBuilder line =
          new StringBuilder("slow gaps per 250 ms from nanoTime " + t0 + " (" + wallT0 + "): ");
      slow.forEach((b, c) -> line.append(c[1]).append('/').append(c[0]).append(' '));
      System.out.println(line);
      System.out.println("kernel.sched_autogroup_enabled: " + Bench.autogroup());
      double steps = 3 * rate * seconds;
      double all = c1.since(c0);
      double jvm = c1.jvm() - c0.jvm();
      System.out.printf(
          "CPU ms per step: all %.3f  JVM %.3f  PostgreSQL %.3f (%.0f%% of two cores)%n",
          all / steps * 1000, jvm / steps * 1000, (all - jvm) / steps * 1000, all / wall / 2 * 100);
      System.out.printf(
          "machine busy during the load: %.0f%% of %d cores, %.3f ms of CPU per step%n",
          busy * 100,
          Runtime.getRuntime().availableProcessors(),
          MachineBusy.msPerStep(busy, 3 * rate));
      if (Boolean.getBoolean("probe.threads")) {
        printThreads(threads0, o.threadsAtEnd(), steps);
      }
      printStatements(
          pg,
          "calls, round(mean_exec_time::numeric, 2) AS mean_ms,"
              + " round(max_exec_time::numeric, 1) AS max_ms",
          "calls > 100",
          Integer.getInteger("probe.statements", 8));
    }
  }

  /**
   * The JVM's CPU per step over the load by kind of thread (its name with the digits taken out), up
   * to the moment the load's runs were done: a thread that started meanwhile counts whole. The
   * JVM's own threads (compilers, collectors) are not among them.
   */
  private static void printThreads(
      Map<String, Double> before, Map<String, Double> after, double steps) {
    Map<String, Double> kinds = new TreeMap<>();
    after.forEach(
        (key, seconds) -> {
          String kind = key.substring(key.indexOf(' ') + 1).replaceAll("[0-9]+", "N");
          kinds.merge(kind, (seconds - before.getOrDefault(key, 0.0)) * 1e3 / steps, Double::sum);
        });
    kinds.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .limit(16)
        .forEach(
            e ->
                System.out.printf("  thread CPU ms per step %.3f  %s%n", e.getValue(), e.getKey()));
  }

  private static void printTopStatements(Pg pg) throws Exception {
    printStatements(
        pg,
        "calls, round(total_exec_time::numeric, 1) AS exec_ms,"
            + " plans || '/' || round(total_plan_time::numeric, 1) AS \"plans/ms\","
            + " shared_blks_hit AS buffers",
        "true",
        Integer.getInteger("probe.statements", 25));
  }

  /** The statements that took the most time, with {@code columns} of pg_stat_statements. */
  private static void printStatements(Pg pg, String columns, String where, int limit)
      throws Exception {
    try (Connection c =
            DriverManager.getConnection(pg.jdbcUrl("postgres"), "postgres", "postgres");
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT "
                        + columns
                        + ", left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS query"
                        + " FROM pg_stat_statements WHERE "
                        + where
                        + " ORDER BY total_exec_time DESC LIMIT "
                        + limit)) {
      int n = rs.getMetaData().getColumnCount();
      StringBuilder head = new StringBuilder();
      for (int i = 1; i <= n; i++) {
        head.append(String.format(i < n ? "%10s " : "%s", rs.getMetaData().getColumnLabel(i)));
      }
      System.out.println(head);
      while (rs.next()) {
        StringBuilder row = new StringBuilder();
        for (int i = 1; i <= n; i++) {
          row.append(String.format(i < n ? "%10s " : "%s", rs.getString(i)));
        }
        System.out.println(row);
      }
    }
  }
}
