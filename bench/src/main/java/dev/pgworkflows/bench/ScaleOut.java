package dev.pgworkflows.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.sql.Migrator;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Steps per second with 1, 2 and 4 hosts of the engine on one PostgreSQL, and where each step's CPU
 * goes. Over HTTP a host is a server process with one worker process beside it; over JDBC a host is
 * a worker process with the engine inside. Each worker holds {@value ScaleOutWorker#CONCURRENCY}
 * runs at once, so every host added brings its share of runs in flight, as adding a service
 * instance would.
 *
 * <p>Per configuration: the processes start, a warm-up backlog is drained, the workflow is paused,
 * {@code --runs} three-step runs are started from 8 threads, and the workflow is resumed: the
 * measurement is the drain from the resume to the last completion, its steps per second and the CPU
 * per step of PostgreSQL (its processes), the servers, the workers and this process (the completion
 * count it polls every 100 ms), each from /proc.
 *
 * <p>{@code java -Dbench.pg.fsync=on -cp bench/target/bench.jar dev.pgworkflows.bench.ScaleOut
 * [--hosts 1,2,4] [--transports http,jdbc] [--runs 4000] [--reps 2] [--out scale-out.json]}
 */
public final class ScaleOut {
  /** Connections per server, and per JDBC worker: the benchmark's pool. */
  static final int POOL = 20;

  private ScaleOut() {}

  /** One drain: its steps per second and CPU milliseconds per step by process kind. */
  record Drain(
      String transport,
      int hosts,
      double stepsPerSecond,
      double postgresMs,
      double serversMs,
      double workersMs,
      double harnessMs) {
    double totalMs() {
      return postgresMs + serversMs + workersMs + harnessMs;
    }
  }

  public static void main(String[] args) throws Exception {
    List<String> a = List.of(args);
    List<Integer> hosts =
        List.of(arg(a, "--hosts", "1,2,4").split(",")).stream().map(Integer::parseInt).toList();
    List<String> transports = List.of(arg(a, "--transports", "http,jdbc").split(","));
    int runs = Integer.parseInt(arg(a, "--runs", "4000"));
    int reps = Integer.parseInt(arg(a, "--reps", "2"));
    Path out = Path.of(arg(a, "--out", "scale-out.json"));
    List<Drain> drains = new ArrayList<>();
    try (Pg pg = new Pg()) {
      for (int rep = 0; rep < reps; rep++) {
        for (String transport : transports) {
          for (int n : hosts) {
            Drain d = measure(pg, transport, n, runs, out);
            drains.add(d);
            System.err.printf(
                "%s × %d: %.0f steps/s, CPU per step %.3f ms (PostgreSQL %.3f, servers %.3f,"
                    + " workers %.3f, harness %.3f)%n",
                transport,
                n,
                d.stepsPerSecond(),
                d.totalMs(),
                d.postgresMs(),
                d.serversMs(),
                d.workersMs(),
                d.harnessMs());
          }
        }
      }
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("fsync", System.getProperty("bench.pg.fsync", "off (zonky's default)"));
    report.put("cores", Runtime.getRuntime().availableProcessors());
    report.put("runs per drain", runs);
    report.put("drains", drains);
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report);
    Files.writeString(out, json);
    System.out.println(table(drains, hosts, transports));
    System.out.println("raw results: " + out.toAbsolutePath());
  }

  /** Medians per configuration, as a Markdown table. */
  private static String table(List<Drain> drains, List<Integer> hosts, List<String> transports) {
    StringBuilder sb =
        new StringBuilder(
            "| workers over | hosts | steps/s | CPU ms/step | PostgreSQL | servers | workers |"
                + " harness |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (String t : transports) {
      for (int n : hosts) {
        List<Drain> ds =
            drains.stream().filter(d -> d.transport().equals(t) && d.hosts() == n).toList();
        sb.append(
            String.format(
                "| %s | %d | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f |%n",
                t,
                n,
                median(ds.stream().map(Drain::stepsPerSecond).toList()),
                median(ds.stream().map(Drain::totalMs).toList()),
                median(ds.stream().map(Drain::postgresMs).toList()),
                median(ds.stream().map(Drain::serversMs).toList()),
                median(ds.stream().map(Drain::workersMs).toList()),
                median(ds.stream().map(Drain::harnessMs).toList())));
      }
    }
    return sb.toString();
  }

  private static double median(List<Double> xs) {
    List<Double> s = xs.stream().sorted().toList();
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  private static String arg(List<String> a, String name, String dflt) {
    int at = a.indexOf(name);
    return at >= 0 ? a.get(at + 1) : dflt;
  }

  private static Drain measure(Pg pg, String transport, int n, int runs, Path out)
      throws Exception {
    String db = pg.freshDatabase("scale");
    List<Process> servers = new ArrayList<>();
    List<Process> workers = new ArrayList<>();
    Path logs = out.toAbsolutePath().resolveSibling("scale-out-logs");
    Files.createDirectories(logs);
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(pg.jdbcUrl(db));
    hc.setUsername("postgres");
    hc.setPassword("postgres");
    hc.setMaximumPoolSize(8);
    hc.setPoolName("scale-out-harness");
    try (HikariDataSource ds = new HikariDataSource(hc)) {
      new Migrator(ds).migrate();
      startHosts(pg, db, transport, n, logs, servers, workers);
      try (WorkflowClient client = WorkflowClient.connect(ds)) {
        return drain(pg, db, transport, n, runs, client, servers, workers);
      }
    } finally {
      for (Process p : workers) {
        p.destroyForcibly().waitFor();
      }
      for (Process p : servers) {
        p.destroy();
        p.waitFor();
      }
    }
  }

  /** Warm-up, then the measured drain of {@code runs} runs started while the workflow paused. */
  private static Drain drain(
      Pg pg,
      String db,
      String transport,
      int n,
      int runs,
      WorkflowClient client,
      List<Process> servers,
      List<Process> workers)
      throws Exception {
    AtomicInteger seqs = new AtomicInteger();
    // Warm-up: the processes' code paths compiled before the measured drain.
    long floor = newestRun(pg, db);
    EightStarters.start(runs / 2, seqs, seq -> client.start(ScaleOutWorker.WORKFLOW, seq));
    awaitCompleted(pg, db, floor, runs / 2, workers);
    pg.exec(db, "SELECT queue.workflow_pause_set('" + ScaleOutWorker.WORKFLOW + "', true)");
    floor = newestRun(pg, db);
    EightStarters.start(runs, seqs, seq -> client.start(ScaleOutWorker.WORKFLOW, seq));
    Pg.Cpu pg0 = Pg.cpu();
    double servers0 = cpuSeconds(servers);
    double workers0 = cpuSeconds(workers);
    long t0 = System.nanoTime();
    pg.exec(db, "SELECT queue.workflow_pause_set('" + ScaleOutWorker.WORKFLOW + "', false)");
    awaitCompleted(pg, db, floor, runs, workers);
    double seconds = (System.nanoTime() - t0) / 1e9;
    Pg.Cpu pg1 = Pg.cpu();
    double steps = runs * 3.0;
    double harness = pg1.jvm() - pg0.jvm();
    double postgres = pg1.since(pg0) - harness;
    return new Drain(
        transport,
        n,
        steps / seconds,
        postgres * 1000 / steps,
        (cpuSeconds(servers) - servers0) * 1000 / steps,
        (cpuSeconds(workers) - workers0) * 1000 / steps,
        harness * 1000 / steps);
  }

  /** Starts {@code n} hosts: servers with a worker process each, or JDBC worker processes. */
  private static void startHosts(
      Pg pg,
      String db,
      String transport,
      int n,
      Path logs,
      List<Process> servers,
      List<Process> workers)
      throws Exception {
    for (int i = 0; i < n; i++) {
      String log = transport + "-" + n + "-" + i;
      if (transport.equals("http")) {
        int port = freePort();
        Map<String, String> env = new LinkedHashMap<>(Ours.serverEnvironment(pg, db, POOL));
        env.put("WORKFLOWS_PORT", Integer.toString(port));
        servers.add(
            ChildProcess.java(
                "dev.pgworkflows.server.Main",
                List.of(),
                List.of(),
                env,
                logs.resolve("server-" + log + ".log")));
        String url = "http://localhost:" + port;
        ChildProcess.awaitReady(url, servers.get(i));
        workers.add(
            ChildProcess.java(
                ScaleOutWorker.class.getName(),
                List.of(),
                List.of("http", url),
                Map.of(),
                logs.resolve("worker-" + log + ".log")));
      } else {
        workers.add(
            ChildProcess.java(
                ScaleOutWorker.class.getName(),
                List.of(),
                List.of("jdbc", pg.jdbcUrl(db)),
                Map.of(),
                logs.resolve("worker-" + log + ".log")));
      }
    }
  }

  private static long newestRun(Pg pg, String db) throws Exception {
    return pg.scalar(db, "SELECT coalesce(max(run_id), 0) FROM queue.workflow_run");
  }

  private static void awaitCompleted(Pg pg, String db, long floor, int n, List<Process> workers)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (pg.scalar(
            db,
            "SELECT count(*) FROM queue.workflow_run WHERE status = 'completed' AND run_id > "
                + floor)
        < n) {
      for (Process w : workers) {
        if (!w.isAlive()) {
          throw new IllegalStateException("a worker process exited; see scale-out-logs");
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("runs did not finish within 5 minutes");
      }
      Thread.sleep(100);
    }
  }

  /** CPU seconds the processes have used so far, from /proc. */
  private static double cpuSeconds(List<Process> ps) {
    double s = 0;
    for (Process p : ps) {
      s +=
          p.info()
                  .totalCpuDuration()
                  .orElseThrow(() -> new IllegalStateException("no CPU time"))
                  .toNanos()
              / 1e9;
    }
    return s;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
