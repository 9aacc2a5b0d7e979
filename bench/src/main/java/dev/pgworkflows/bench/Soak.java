package dev.pgworkflows.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PERFORMANCE.md's soak: the three-step workflow in a closed loop (8 starters keeping {@code
 * --in-flight} runs unfinished) for {@code --minutes}, with every run kept in the history as
 * retention keeps it. Every {@code --interval} seconds it records runs/s, CPU per 1k steps, and
 * each workflow table's live and dead tuples, size and autovacuum count. Throughput drift compares
 * the last fifth of the intervals with the first fifth after the first; dead tuples are bounded
 * when the largest count of the last third is no larger than a multiple of the first third's.
 *
 * <p>{@code java -cp bench/target/bench.jar dev.pgworkflows.bench.Soak [--minutes 30] [--in-flight
 * 500] [--interval 60] [--out soak.json]}
 */
public final class Soak {
  private static final List<String> TABLES =
      List.of("q___wf_bench3", "workflow_run", "workflow_step");

  private Soak() {}

  public static void main(String[] args) throws Exception {
    Ours.keepConnections();
    List<String> a = List.of(args);
    double minutes = doubleArg(a, "--minutes", 30);
    int inFlight = (int) doubleArg(a, "--in-flight", 500);
    double intervalSeconds = doubleArg(a, "--interval", 60);
    int outAt = a.indexOf("--out");
    Path out = Path.of(outAt >= 0 ? a.get(outAt + 1) : "soak.json");

    List<Map<String, Object>> rows = new ArrayList<>();
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("at", Instant.now().toString());
    r.put("minutes", minutes);
    r.put("runs in flight", inFlight);
    r.put("java", System.getProperty("java.version"));
    try (Pg pg = new Pg();
        Ours ours = new Ours(pg, 20)) {
      String db = ours.database();
      for (int i = 0; i < 3; i++) {
        ours.burnDown(2000); // warm-up: the JIT, plans, pool
      }
      long t0 = System.nanoTime();
      Pg.Cpu[] cpu = {Pg.cpu()};
      System.out.printf(
          "%7s %8s %9s %9s %9s %10s %10s %10s %10s %10s %8s%n",
          "minute",
          "runs/s",
          "CPU/1k",
          "JVM/1k",
          "PG/1k",
          "q dead",
          "run dead",
          "step dead",
          "q MiB",
          "step MiB",
          "vacuums");
      ours.closedLoop(
          Duration.ofMillis((long) (minutes * 60_000)),
          inFlight,
          Duration.ofMillis((long) (intervalSeconds * 1000)),
          iv -> {
            Pg.Cpu now = Pg.cpu();
            double steps = Math.max(1, 3 * iv.runs());
            double all = now.since(cpu[0]);
            double jvm = now.jvm() - cpu[0].jvm();
            cpu[0] = now;
            double cpuPer1k = all / steps * 1000;
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("minute", Math.round((System.nanoTime() - t0) / 6e8) / 100.0);
            row.put("runs/s", iv.runs() / iv.seconds());
            row.put("CPU s per 1k steps", cpuPer1k);
            row.put("JVM CPU s per 1k steps", jvm / steps * 1000);
            row.put("PostgreSQL CPU s per 1k steps", (all - jvm) / steps * 1000);
            row.put(
                "JVM heap used MiB",
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0);
            try {
              row.put("tables", tables(pg, db));
            } catch (Exception e) {
              row.put("tables", Map.of("error", e.getMessage()));
            }
            rows.add(row);
            print(row);
          });
    }
    r.put("intervals", rows);
    r.putAll(summary(rows));
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(r);
    Files.writeString(out, json);
    System.out.println(new ObjectMapper().writeValueAsString(summary(rows)));
    System.out.println("raw results: " + out.toAbsolutePath());
  }

  private static double doubleArg(List<String> a, String name, double dflt) {
    int at = a.indexOf(name);
    return at >= 0 ? Double.parseDouble(a.get(at + 1)) : dflt;
  }

  /** Live and dead tuples, bytes and autovacuums of each workflow table. */
  private static Map<String, Map<String, Long>> tables(Pg pg, String db) throws Exception {
    Map<String, Map<String, Long>> out = new LinkedHashMap<>();
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl(db), "postgres", "postgres");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT relname, n_live_tup, n_dead_tup, autovacuum_count,"
                    + " pg_total_relation_size(relid) FROM pg_stat_user_tables"
                    + " WHERE schemaname = 'queue' AND relname IN ('"
                    + String.join("', '", TABLES)
                    + "')")) {
      while (rs.next()) {
        Map<String, Long> t = new LinkedHashMap<>();
        t.put("live", rs.getLong(2));
        t.put("dead", rs.getLong(3));
        t.put("autovacuums", rs.getLong(4));
        t.put("bytes", rs.getLong(5));
        out.put(rs.getString(1), t);
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static long table(Map<String, Object> row, String table, String what) {
    Map<String, Map<String, Long>> t = (Map<String, Map<String, Long>>) row.get("tables");
    Map<String, Long> one = t.get(table);
    return one == null || one.get(what) == null ? 0 : one.get(what);
  }

  private static void print(Map<String, Object> row) {
    long vacuums = 0;
    for (String t : TABLES) {
      vacuums += table(row, t, "autovacuums");
    }
    System.out.printf(
        "%7.2f %8.0f %9.3f %9.3f %9.3f %10d %10d %10d %10.1f %10.1f %8d%n",
        (double) row.get("minute"),
        (double) row.get("runs/s"),
        (double) row.get("CPU s per 1k steps"),
        (double) row.get("JVM CPU s per 1k steps"),
        (double) row.get("PostgreSQL CPU s per 1k steps"),
        table(row, "q___wf_bench3", "dead"),
        table(row, "workflow_run", "dead"),
        table(row, "workflow_step", "dead"),
        table(row, "q___wf_bench3", "bytes") / 1048576.0,
        table(row, "workflow_step", "bytes") / 1048576.0,
        vacuums);
  }

  /**
   * Drift: the mean runs/s of the last fifth of the intervals against the first fifth, the first
   * interval left out (the loop filling up). Dead tuples: the largest count of each table in the
   * first and in the last third.
   */
  static Map<String, Object> summary(List<Map<String, Object>> rows) {
    Map<String, Object> s = new LinkedHashMap<>();
    List<Map<String, Object>> measured = rows.size() > 1 ? rows.subList(1, rows.size()) : rows;
    int fifth = Math.max(1, measured.size() / 5);
    double first = meanRate(measured.subList(0, fifth));
    double last = meanRate(measured.subList(measured.size() - fifth, measured.size()));
    s.put("runs/s, first fifth", first);
    s.put("runs/s, last fifth", last);
    s.put("throughput drift", last / first - 1);
    int third = Math.max(1, measured.size() / 3);
    for (String t : TABLES) {
      s.put(t + " dead tuples max, first third", maxDead(measured.subList(0, third), t));
      s.put(
          t + " dead tuples max, last third",
          maxDead(measured.subList(measured.size() - third, measured.size()), t));
    }
    return s;
  }

  private static double meanRate(List<Map<String, Object>> rows) {
    return rows.stream().mapToDouble(r -> (double) r.get("runs/s")).average().orElse(Double.NaN);
  }

  private static long maxDead(List<Map<String, Object>> rows, String t) {
    return rows.stream().mapToLong(r -> table(r, t, "dead")).max().orElse(0);
  }
}
