package dev.pgworkflows.bench;

import java.io.PrintStream;
import java.nio.file.Path;

/**
 * {@link Bench}'s command line. Everything it accepts is in {@link #USAGE}; anything else is
 * refused before the benchmark starts, since a full run takes about three quarters of an hour.
 *
 * @param help {@code --help} or {@code -h} was given
 * @param quick the quick mode
 * @param reps repetitions, or null for the mode's default
 * @param runs runs per burn-down, or null for the mode's default
 * @param system the one system to run ({@code pgworkflows} or {@code DBOS}), or null for both
 * @param out where the raw results go as JSON
 * @param fanOutOnly run only the fan-out workload (pgworkflows: one run of 100 parallel steps)
 * @param longRunOnly run only the long-run workload (both of ours: one run of 1,000 iterations)
 */
record Options(
    boolean help,
    boolean quick,
    Integer reps,
    Integer runs,
    String system,
    Path out,
    boolean fanOutOnly,
    boolean longRunOnly) {

  static final String USAGE =
      """
      Usage: java -jar bench/target/bench.jar [options]

      Runs pgworkflows and DBOS Transact side by side on one embedded PostgreSQL and prints a
      table of medians. The full run (3 repetitions, 10,000-run burn-downs) takes about 45 min.

        --quick           quick mode: 1 repetition, 1,000-run burn-downs, 5 s load levels
        --reps N          repetitions (default 3; 1 with --quick)
        --runs N          runs per burn-down (default 10000; 1000 with --quick)
        --system NAME     run one system only: pgworkflows, pgworkflows-jdbc or DBOS
        --out FILE        the raw results as JSON (default bench-results.json)
        --fan-out         only the fan-out workload: one run of 100 parallel steps, again
                          and again (pgworkflows only; a few seconds)
        --long-run        only the long-run workload: one run of 1,000 iterations of a step
                          and a 1 ms sleep (both of ours; under a minute)
        -h, --help        print this help and exit

      JVM properties: -Dbench.concurrency=N (runs each of our workers holds, default 96),
      -Dbench.pg.<setting>=<value> (any PostgreSQL setting). See docs/benchmarks.md.
      """;

  /** What to do with a command line: run with {@code options}, or, when null, exit with status. */
  record Outcome(Options options, int exitStatus) {}

  /**
   * Reads a command line as {@code main} gets it: the options to run with, or, for {@code --help},
   * the usage on {@code out} and status 0, or, for anything it does not accept, an error naming it
   * and the usage on {@code err} and status 2.
   */
  static Outcome read(String[] args, PrintStream out, PrintStream err) {
    Options options;
    try {
      options = parse(args);
    } catch (IllegalArgumentException e) {
      err.println("bench: " + e.getMessage());
      err.println();
      err.print(USAGE);
      return new Outcome(null, 2);
    }
    if (options.help()) {
      out.print(USAGE);
      return new Outcome(null, 0);
    }
    return new Outcome(options, 0);
  }

  /**
   * The options in {@code args}, left to right; {@code --help} ends the parse.
   *
   * @throws IllegalArgumentException naming an argument it does not accept, or a missing or bad
   *     value
   */
  static Options parse(String... args) {
    boolean quick = false;
    Integer reps = null;
    Integer runs = null;
    String system = null;
    Path out = Path.of("bench-results.json");
    boolean fanOutOnly = false;
    boolean longRunOnly = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "-h", "--help" -> {
          return new Options(true, quick, reps, runs, system, out, fanOutOnly, longRunOnly);
        }
        case "--quick" -> quick = true;
        case "--reps" -> reps = count(arg, value(args, ++i, arg));
        case "--runs" -> runs = count(arg, value(args, ++i, arg));
        case "--system" -> system = system(value(args, ++i, arg));
        case "--out" -> out = Path.of(value(args, ++i, arg));
        case "--fan-out" -> fanOutOnly = true;
        case "--long-run" -> longRunOnly = true;
        default ->
            throw new IllegalArgumentException(
                (arg.startsWith("-") ? "unknown option: " : "unexpected argument: ") + arg);
      }
    }
    return new Options(false, quick, reps, runs, system, out, fanOutOnly, longRunOnly);
  }

  private static String value(String[] args, int at, String option) {
    if (at >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[at];
  }

  private static int count(String option, String value) {
    try {
      int n = Integer.parseInt(value);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new IllegalArgumentException(option + " needs a whole number above 0, not: " + value);
  }

  private static String system(String value) {
    if (value.equalsIgnoreCase("pgworkflows")) {
      return "pgworkflows";
    }
    if (value.equalsIgnoreCase("DBOS")) {
      return "DBOS";
    }
    if (value.equalsIgnoreCase("pgworkflows-jdbc")) {
      return "pgworkflows-jdbc";
    }
    throw new IllegalArgumentException(
        "--system is pgworkflows, pgworkflows-jdbc or DBOS, not: " + value);
  }
}
