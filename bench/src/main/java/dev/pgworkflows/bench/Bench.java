package dev.pgworkflows.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.pgworkflows.workflows.Concurrency;
import dev.pgworkflows.workflows.ConcurrencyStrategy;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * pgworkflows and DBOS Transact Java on one PostgreSQL, in one invocation, alternating systems (A
 * B, then B A), each on a fresh database with the same pool size. Prints a table of medians with
 * spread and ours/DBOS ratios, and writes the raw numbers as JSON.
 *
 * <p>{@code java -jar bench/target/bench.jar [--quick] [--reps N] [--runs N] [--system
 * pgworkflows|DBOS] [--fan-out] [--out results.json]}; {@code --help} lists them (see {@link
 * Options}).
 */
public final class Bench {
  private static final int POOL = 20;

  /** The load level both systems run at the same rate, in runs/s. */
  private static final double FIXED_RATE = 200;

  /** The branches of the fan-out workload's parallel group. */
  private static final int FAN_OUT = 100;

  private record Settings(
      int reps,
      int burnRuns,
      double steadySeconds,
      int sleepers,
      int idleSamples,
      long idleMs,
      double cycleSeconds,
      int maxWarmRounds,
      int fanOutRounds) {}

  private Bench() {}

  public static void main(String[] args) throws Exception {
    Options.Outcome read = Options.read(args, System.out, System.err);
    if (read.options() == null) {
      System.exit(read.exitStatus());
    }
    Options o = read.options();
    Ours.keepConnections();
    boolean quick = o.quick();
    Settings s =
        quick
            ? new Settings(1, 1000, 5, 100, 20, 200, 5, 1, 10)
            : new Settings(3, 10_000, 20, 100, 200, 1000, 10, 8, 30);
    if (o.reps() != null || o.runs() != null) {
      s =
          new Settings(
              o.reps() != null ? o.reps() : s.reps,
              o.runs() != null ? o.runs() : s.burnRuns,
              s.steadySeconds,
              s.sleepers,
              s.idleSamples,
              s.idleMs,
              s.cycleSeconds,
              s.maxWarmRounds,
              s.fanOutRounds);
    }
    Path out = o.out();
    String only = o.system();
    Map<String, Map<String, List<Double>>> results = new LinkedHashMap<>();
    results.put("pgworkflows", new LinkedHashMap<>());
    results.put("pgworkflows-jdbc", new LinkedHashMap<>());
    results.put("DBOS", new LinkedHashMap<>());
    long started = System.nanoTime();
    try (Pg pg = new Pg()) {
      for (int rep = 0; rep < s.reps; rep++) {
        // Each repetition in another order, so no system always follows the same one.
        List<String> systems = List.of("pgworkflows", "pgworkflows-jdbc", "DBOS");
        List<String> order = new ArrayList<>(systems);
        java.util.Collections.rotate(order, rep);
        for (String sys : order) {
          if (only != null && !only.equals(sys)) {
            continue;
          }
          System.err.printf("rep %d: %s%n", rep + 1, sys);
          if (o.longRunOnly()) {
            if (!sys.equals("DBOS")) {
              longRun(pg, sys, results.get(sys));
            }
            continue;
          }
          if (o.fanOutOnly()) {
            if (sys.equals("pgworkflows")) {
              fanOut(pg, s, results.get(sys));
            }
            continue;
          }
          runOne(pg, sys, s, results.get(sys));
        }
      }
    }
    double minutes = (System.nanoTime() - started) / 60e9;
    print(results, s, minutes);
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("at", Instant.now().toString());
    json.put("mode", quick ? "quick" : "full");
    json.put("settings", s);
    json.put("cores", Runtime.getRuntime().availableProcessors());
    json.put("java", System.getProperty("java.version"));
    json.put("sched_autogroup", autogroup());
    json.put("results", results);
    Files.writeString(
        out,
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json));
    System.out.println("raw results: " + out.toAbsolutePath());
  }

  private static Contender open(Pg pg, String sys) throws Exception {
    return switch (sys) {
      case "DBOS" -> new Dbos(pg, POOL);
      case "pgworkflows-jdbc" -> Ours.overJdbc(pg, POOL);
      default -> new Ours(pg, POOL);
    };
  }

  /**
   * Warm-up: both systems run in this JVM, and the JIT compiler keeps compiling for tens of
   * thousands of requests on two cores (in a probe it was still 44 % of this JVM's CPU after 6,000
   * runs); measuring before it settles measures the compiler. Burn-downs of {@code runs} until one
   * spends under 5 % of its wall time compiling, at most {@code maxRounds} (the quick mode does
   * one). The rounds and the compiling share of the last one are reported.
   */
  private static void warmUp(Contender c, int runs, int maxRounds, Map<String, List<Double>> r)
      throws Exception {
    Warmed w = warm("warm-up", maxRounds, () -> c.burnDown(runs));
    add(r, "warm-up rounds", w.rounds());
    add(r, "warm-up: last round's share compiling", w.share());
  }

  /**
   * Warm-up of the pre-started burn-down: its paths are not all the started-and-run burn-down's
   * (ours: full polls, and batches of completions that take the next runs back; DBOS: its queue),
   * and in the probe a first drain after six burn-down warm-ups ran at 0.7× the fourth, its JVM CPU
   * a step twice the fourth's. Rounds of {@code runs}, as {@link #warm} runs them; returns the
   * compiling share of the last one.
   */
  static double warmDrain(Contender c, int runs, int maxRounds) throws Exception {
    return warm("pre-started warm-up", maxRounds, () -> c.drain(runs)).share();
  }

  /**
   * Warm-up of the steady load: its paths are not the burn-down's (lone starts, lone completions,
   * starts handed to waiting polls), and after the burn-down warm-up the JIT compiler was still
   * taking 0.10-0.19 ms of CPU a step through a 20 s level of ours at half load, a tenth to a sixth
   * of all the CPU a step cost, on the two cores the load runs on. Rounds of {@code seconds} at
   * {@code rate}, as {@link #warm} runs them; returns the compiling share of the last one.
   */
  static double warmSteady(Contender c, double rate, double seconds, int maxRounds)
      throws Exception {
    String what = String.format("steady warm-up at %.0f runs/s,", rate);
    return warm(what, maxRounds, () -> c.steady(rate, seconds)).share();
  }

  /** One warm-up round: a workload run once. */
  private interface Round {
    void run() throws Exception;
  }

  /** How many rounds a warm-up ran, and the share of the last one's wall time spent compiling. */
  private record Warmed(int rounds, double share) {}

  /**
   * Runs {@code round} until one spends under 5 % of its wall time compiling, at most {@code
   * maxRounds} times.
   */
  private static Warmed warm(String what, int maxRounds, Round round) throws Exception {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    int rounds = 0;
    double share = Double.NaN;
    while (rounds < maxRounds) {
      long compiled0 = jit.getTotalCompilationTime();
      long t0 = System.nanoTime();
      round.run();
      rounds++;
      share = (jit.getTotalCompilationTime() - compiled0) / ((System.nanoTime() - t0) / 1e6);
      System.err.printf("  %s round %d: %.0f %% of it compiling%n", what, rounds, share * 100);
      if (share < 0.05) {
        break;
      }
    }
    return new Warmed(rounds, share);
  }

  private static void add(Map<String, List<Double>> r, String key, double v) {
    r.computeIfAbsent(key, k -> new ArrayList<>()).add(v);
  }

  private static void runOne(Pg pg, String sys, Settings s, Map<String, List<Double>> r)
      throws Exception {
    double peak;
    try (Contender c = open(pg, sys)) {
      warmUp(c, Math.max(2000, s.burnRuns / 5), s.maxWarmRounds, r);
      Thread.sleep(2000); // the warm-up's commit counts published
      Pg.Counts counts0 = pg.counts();
      long wal0 = pg.walLsn();
      Pg.Cpu cpu0 = Pg.cpu();
      double secs = c.burnDown(s.burnRuns);
      double cpu = Pg.cpu().since(cpu0);
      long wal = pg.walLsn() - wal0;
      Thread.sleep(2000);
      Pg.Counts counts = pg.counts().since(counts0);
      long steps = 3L * s.burnRuns;
      peak = s.burnRuns / secs;
      add(r, "burn-down runs/s", peak);
      add(r, "burn-down steps/s", steps / secs);
      add(r, "WAL bytes per step", (double) wal / steps);
      add(r, "CPU s per 1k steps", cpu / steps * 1000);
      add(r, "commits per step", (double) counts.commits() / steps);
      add(r, "statements per step (top level)", (double) counts.statements() / steps);
      add(
          r,
          "pre-started warm-up: last round's share compiling",
          warmDrain(c, Math.max(2000, s.burnRuns / 5), s.maxWarmRounds));
      add(r, "pre-started burn-down steps/s", steps / c.drain(s.burnRuns));
    }
    try (Contender c = open(pg, sys)) {
      // The load levels run on a fresh database, connections and plans; one short burn-down
      // first, so the levels meet the system in the state its peak was measured in.
      c.burnDown(Math.min(2000, s.burnRuns));
      // The levels' own paths compiled before they are measured (see warmSteady).
      add(
          r,
          "steady warm-up: last round's share compiling",
          warmSteady(c, peak * 0.5, s.steadySeconds / 2, s.maxWarmRounds));
      for (double load : new double[] {0.5, 0.8}) {
        double rate = peak * load;
        MachineBusy.Over<Recorder> level =
            MachineBusy.over(s.steadySeconds, () -> c.steady(rate, s.steadySeconds));
        Recorder rec = level.result();
        String at = " @" + Math.round(load * 100) + "%";
        add(r, "step-to-step p50 ms" + at, Stats.percentile(rec.stepToStep(), 50));
        add(r, "step-to-step p99 ms" + at, Stats.percentile(rec.stepToStep(), 99));
        add(r, "start→first step p50 ms" + at, Stats.percentile(rec.startToFirstStep(), 50));
        add(r, "start→first step p99 ms" + at, Stats.percentile(rec.startToFirstStep(), 99));
        add(r, "machine busy %" + at, level.busy() * 100);
        add(r, "machine CPU ms per step" + at, MachineBusy.msPerStep(level.busy(), 3 * rate));
      }
      // The same rate for both systems, one each carries without queueing: what a step costs
      // when requests do not pile up into batches, and the latency there.
      MachineBusy.Over<Recorder> fixed =
          MachineBusy.over(s.steadySeconds, () -> c.steady(FIXED_RATE, s.steadySeconds));
      String at = " @" + Math.round(FIXED_RATE) + " runs/s";
      add(r, "step-to-step p50 ms" + at, Stats.percentile(fixed.result().stepToStep(), 50));
      add(r, "step-to-step p99 ms" + at, Stats.percentile(fixed.result().stepToStep(), 99));
      add(
          r,
          "start→first step p99 ms" + at,
          Stats.percentile(fixed.result().startToFirstStep(), 99));
      add(r, "machine busy %" + at, fixed.busy() * 100);
      add(r, "machine CPU ms per step" + at, MachineBusy.msPerStep(fixed.busy(), 3 * FIXED_RATE));
      // A first round of sleeps is the first use of the sleep path on fresh connections (plans,
      // compiled functions, JIT) for either system; the second is the one measured.
      c.sleepOvershoot(s.sleepers);
      List<Double> over = c.sleepOvershoot(s.sleepers);
      add(r, "sleep(1 s) overshoot p50 ms", Stats.percentile(over, 50));
      add(r, "sleep(1 s) overshoot p99 ms", Stats.percentile(over, 99));
      List<Double> idle = c.idleStart(s.idleSamples, s.idleMs);
      add(r, "idle start→first step p50 ms", Stats.percentile(idle, 50));
      add(r, "idle start→first step p99 ms", Stats.percentile(idle, 99));
      if (c instanceof Ours ours && ours.overHttp()) {
        List<Double> wake = ours.queueWakeup(s.idleSamples, s.idleMs);
        add(r, "queue long-poll wake-up p50 ms", Stats.percentile(wake, 50));
        add(r, "queue long-poll wake-up p99 ms", Stats.percentile(wake, 99));
      }
    }
    if (!sys.equals("DBOS")) {
      longRun(pg, sys, r);
    }
    if (sys.equals("pgworkflows")) {
      queueCycles(pg, s, r);
      fanOut(pg, s, r);
      keyed(pg, s, r);
    }
  }

  /** The long-run workload's iterations, and the window compared at its start and end. */
  private static final int LONG_RUN = 1000;

  private static final int LONG_RUN_WINDOW = 100;

  /**
   * The long-run workload (both of ours), on a contender of its own: one run of {@value #LONG_RUN}
   * iterations of (a no-op step, a 1 ms sleep), after one unmeasured run of a tenth of that. The
   * median ms per iteration over the first and the last {@value #LONG_RUN_WINDOW} iterations, and
   * their ratio: a run whose journal grows should cost the same per iteration at its end.
   */
  private static void longRun(Pg pg, String sys, Map<String, List<Double>> r) throws Exception {
    try (Contender c = open(pg, sys)) {
      Ours ours = (Ours) c;
      ours.longRun(LONG_RUN / 10);
      double[] perIteration = ours.longRun(LONG_RUN);
      double first = Stats.median(java.util.Arrays.copyOfRange(perIteration, 0, LONG_RUN_WINDOW));
      double last =
          Stats.median(
              java.util.Arrays.copyOfRange(
                  perIteration, perIteration.length - LONG_RUN_WINDOW, perIteration.length));
      String what = "long run (" + LONG_RUN + " × step, sleep 1 ms): ";
      add(r, what + "first " + LONG_RUN_WINDOW + " ms/iteration", first);
      add(r, what + "last " + LONG_RUN_WINDOW + " ms/iteration", last);
      add(r, what + "last / first", last / first);
    }
  }

  /** Concurrency keys of the keyed burn-down; the limit per key shares the workers' slots out. */
  private static final int KEYS = 16;

  /**
   * The keyed burn-down (pgworkflows), on a contender of its own: the pre-started burn-down with
   * each run given one of {@value #KEYS} concurrency keys and bench3 a limit per key of the
   * workers' slots over the keys, against the same burn-down without keys, each after an unmeasured
   * one of its kind; then under one total limit of the workers' slots shared round-robin by key
   * (fairness), and the keyed starts' rate under a limit per key and under a strategy. Steps per
   * second, starts per second, and the ratios.
   */
  private static void keyed(Pg pg, Settings s, Map<String, List<Double>> r) throws Exception {
    try (Ours ours = new Ours(pg, POOL)) {
      int n = s.burnRuns;
      ours.drainStarted(ours.startOnly(Math.max(1000, n / 5), 0));
      double plain = 3.0 * n / ours.drainStarted(ours.startOnly(n, 0));
      ours.concurrencyLimit(Ours.slots() / KEYS);
      ours.drainStarted(ours.startOnly(Math.max(1000, n / 5), KEYS));
      double keyed = 3.0 * n / ours.drainStarted(ours.startOnly(n, KEYS));
      // The same keys under one total limit of the workers' slots, admitted round-robin by key.
      ours.concurrency(Concurrency.limit(Ours.slots()).total(Ours.slots()));
      ours.drainStarted(ours.startOnly(Math.max(1000, n / 5), KEYS));
      double fair = 3.0 * n / ours.drainStarted(ours.startOnly(n, KEYS));
      // Keyed starts under a strategy (cancel_newest, a limit no key reaches): the start's lock
      // and count, against keyed starts under the plain limit.
      ours.concurrency(Concurrency.limit(Ours.slots() / KEYS));
      double queued = startsPerSecond(ours, n);
      ours.concurrency(Concurrency.limit(100_000).strategy(ConcurrencyStrategy.CANCEL_NEWEST));
      double strategy = startsPerSecond(ours, n);
      ours.concurrencyLimit(null);
      add(r, "pre-started burn-down steps/s, no keys", plain);
      add(r, "pre-started burn-down steps/s, " + KEYS + " keys", keyed);
      add(r, "keyed / unkeyed burn-down", keyed / plain);
      add(r, "pre-started burn-down steps/s, " + KEYS + " keys, shared total (round robin)", fair);
      add(r, "round robin / keyed burn-down", fair / keyed);
      add(r, "keyed starts/s, limit per key", queued);
      add(r, "keyed starts/s, strategy cancel_newest", strategy);
    }
  }

  /** Keyed starts per second from 8 threads; the runs are then served and drained, unmeasured. */
  private static double startsPerSecond(Ours ours, int n) throws Exception {
    long t0 = System.nanoTime();
    Ours.Started started = ours.startOnly(n, KEYS);
    double perSecond = n / ((System.nanoTime() - t0) / 1e9);
    ours.drainStarted(started);
    return perSecond;
  }

  /**
   * The fan-out workload (pgworkflows), on a contender of its own: one run of {@value #FAN_OUT}
   * parallel no-op steps at a time, a third of the rounds unmeasured first (the parallel paths are
   * not the burn-down's). Steps per second of fan-out, the wall time of one fan-out, and the
   * journal requests one took.
   */
  private static void fanOut(Pg pg, Settings s, Map<String, List<Double>> r) throws Exception {
    try (Ours ours = new Ours(pg, POOL)) {
      FanOut.Result f = ours.fanOut(FAN_OUT, Math.max(3, s.fanOutRounds / 3), s.fanOutRounds);
      String what = "fan-out of " + FAN_OUT + ": ";
      add(r, what + "steps/s", f.stepsPerSecond());
      add(r, what + "wall ms p50", f.medianMs());
      add(r, what + "wall ms max", f.worstMs());
      add(r, what + "journal requests", f.requestsPerFanOut());
    }
  }

  /**
   * The queue micro-benchmark on a contender of its own: on the load levels' database, right after
   * them, a cycle cost twice as much on both sides for the next 10-30 s (background work after the
   * load, and the JIT recompiling code shared with the workflow paths), which measured the workflow
   * load's aftermath rather than the queue. One unmeasured round of twice a level's length first,
   * which also compiles the queue routes (in the first repetition they have not run yet in this
   * JVM).
   */
  private static void queueCycles(Pg pg, Settings s, Map<String, List<Double>> r) throws Exception {
    try (Ours ours = new Ours(pg, POOL)) {
      ours.queueCycles(4, 2 * s.cycleSeconds);
      for (int clients : new int[] {1, 4, 16}) {
        add(
            r,
            "queue send+receive+delete/s, " + clients + " clients",
            ours.queueCycles(clients, s.cycleSeconds));
      }
    }
  }

  private static void print(
      Map<String, Map<String, List<Double>>> results, Settings s, double minutes) {
    Map<String, List<Double>> ours = results.get("pgworkflows");
    Map<String, List<Double>> dbos = results.get("DBOS");
    Function<List<Double>, String> fmt =
        v -> {
          if (v == null || v.isEmpty()) {
            return "-";
          }
          double[] d = v.stream().mapToDouble(Double::doubleValue).toArray();
          String m = String.format("%.2f", Stats.median(d));
          return d.length > 1 ? m + " ±" + String.format("%.2f", Stats.spread(d) / 2) : m;
        };
    System.out.printf(
        "%nmedian of %d repetition(s) (± half the spread); %d burn-down runs; %.1f min%n",
        s.reps, s.burnRuns, minutes);
    System.out.printf(
        "kernel.sched_autogroup_enabled: %s (1: each PostgreSQL backend is a scheduling group of"
            + " its own, as big as a whole JVM; see docs/benchmarks.md)%n",
        autogroup());
    Map<String, List<Double>> jdbc = results.get("pgworkflows-jdbc");
    System.out.printf(
        "%-42s %18s %18s %18s %10s %10s%n",
        "metric", "pgworkflows", "pgworkflows-jdbc", "DBOS", "http/DBOS", "jdbc/DBOS");
    java.util.Set<String> keys = new java.util.LinkedHashSet<>(ours.keySet());
    keys.addAll(jdbc.keySet());
    keys.addAll(dbos.keySet());
    for (String key : keys) {
      List<Double> o = ours.get(key);
      List<Double> j = jdbc.get(key);
      List<Double> d = dbos.get(key);
      System.out.printf(
          "%-42s %18s %18s %18s %10s %10s%n",
          key, fmt.apply(o), fmt.apply(j), fmt.apply(d), ratio(o, d), ratio(j, d));
    }
  }

  /** The ratio of two medians, "-" when either is missing. */
  private static String ratio(List<Double> a, List<Double> b) {
    if (a == null || a.isEmpty() || b == null || b.isEmpty()) {
      return "-";
    }
    double am = Stats.median(a.stream().mapToDouble(Double::doubleValue).toArray());
    double bm = Stats.median(b.stream().mapToDouble(Double::doubleValue).toArray());
    return String.format("%.2f", am / bm);
  }

  /**
   * The kernel's autogroup setting, "-" where unreadable. With it on, every process that starts a
   * session of its own (each PostgreSQL backend does) is scheduled as a group as big as the whole
   * JVM, and tasks queued behind such groups waited 150-330 ms on a busy machine.
   */
  static String autogroup() {
    try {
      return Files.readString(Path.of("/proc/sys/kernel/sched_autogroup_enabled")).trim();
    } catch (IOException | RuntimeException e) {
      return "-";
    }
  }
}
