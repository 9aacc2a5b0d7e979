package dev.pgworkflows.reliability;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A PostgreSQL 15 formation run by pg_auto_failover (Debian's {@code postgresql-15-auto-failover}):
 * a monitor and two data nodes on this machine, each a {@code pg_autoctl ... --run} service
 * process, as the operating system user {@code postgres}. The monitor decides: it promotes the
 * standby when the primary's node stops answering, and orders switchovers. With two nodes, commits
 * wait for the standby (pg_auto_failover's default, replication quorum on) unless {@link
 * #asynchronous()} says otherwise.
 *
 * <p>The monitor's health checks are made faster than their defaults (a check a second, a node
 * unhealthy after 5 s, 5 s for an unreachable primary to demote itself), so a failover takes
 * seconds rather than most of a minute.
 */
final class AutoFailoverCluster implements AutoCloseable {
  static final Path BIN = Path.of("/usr/lib/postgresql/15/bin");
  static final Path PG_AUTOCTL = Path.of("/usr/bin/pg_autoctl");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path root;
  private final int monitorPort;
  private final int[] ports = new int[2];
  private final Process[] nodes = new Process[2];
  private Process monitor;

  private AutoFailoverCluster(Path root, int monitorPort) {
    this.root = root;
    this.monitorPort = monitorPort;
  }

  /** Whether Debian's pg_auto_failover for PostgreSQL 15 is installed. */
  static boolean installed() {
    return Files.isExecutable(PG_AUTOCTL) && Files.isExecutable(BIN.resolve("pg_ctl"));
  }

  /** A monitor, then a primary, then its standby; returns once the standby is streaming. */
  static AutoFailoverCluster start() throws Exception {
    Path root = Files.createTempDirectory("pgwf-autofailover");
    sh("chown", "postgres:postgres", root.toString());
    AutoFailoverCluster c = new AutoFailoverCluster(root, freePort());
    try {
      c.monitor =
          c.service(
              "monitor",
              "create",
              "monitor",
              "--pgdata",
              root.resolve("monitor").toString(),
              "--pgport",
              Integer.toString(c.monitorPort),
              "--hostname",
              "localhost",
              "--auth",
              "trust",
              "--no-ssl",
              "--run");
      c.awaitMonitor();
      c.psql(
          c.monitorPort,
          "pg_auto_failover",
          "ALTER SYSTEM SET pgautofailover.health_check_period = 1000",
          "ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000",
          "ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1",
          "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500",
          "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 5000",
          // How long the monitor gives a primary it cannot reach to demote itself before it
          // promotes the standby (30 s by default).
          "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 5000",
          "SELECT pg_reload_conf()");
      for (int i = 0; i < 2; i++) {
        c.ports[i] = freePort();
        c.nodes[i] = c.startNode(i, true);
        c.awaitStates(
            i == 0 ? Map.of("node1", "single") : Map.of("node1", "primary", "node2", "secondary"));
      }
      return c;
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
  }

  private Process startNode(int i, boolean create) throws IOException {
    String name = "node" + (i + 1);
    List<String> args = new ArrayList<>();
    if (create) {
      args.addAll(
          List.of(
              "create",
              "postgres",
              "--name",
              name,
              "--pgport",
              Integer.toString(ports[i]),
              "--hostname",
              "localhost",
              "--auth",
              "trust",
              "--no-ssl",
              "--monitor",
              monitorUri()));
    } else {
      args.add("run");
    }
    args.addAll(List.of("--pgdata", root.resolve(name).toString()));
    if (create) {
      args.add("--run");
    }
    return service(name, args.toArray(String[]::new));
  }

  /** A JDBC URL naming both nodes, for the primary whichever it is. */
  String multiHostJdbcUrl() {
    return "jdbc:postgresql://localhost:"
        + ports[0]
        + ",localhost:"
        + ports[1]
        + "/postgres?targetServerType=primary";
  }

  /** The standby no longer counts for commits: they no longer wait for it. */
  void asynchronous() throws Exception {
    autoctl(
        "set", "node", "replication-quorum", "false", "--pgdata", root.resolve("node2").toString());
    awaitSynchronousStandbyNames("");
  }

  /** The name of the node that is primary now (node1 or node2), by the monitor. */
  String primary() throws Exception {
    for (Map.Entry<String, String[]> e : states().entrySet()) {
      if (e.getValue()[0].equals("primary")
          || e.getValue()[0].equals("single")
          || e.getValue()[0].equals("wait_primary")) {
        return e.getKey();
      }
    }
    return null;
  }

  /**
   * The node's service and PostgreSQL SIGKILLed at once, as when its machine dies; the monitor
   * notices by itself.
   */
  void killNode(String name) throws Exception {
    int i = name.equals("node1") ? 0 : 1;
    killTree(nodes[i], root.resolve(name));
    nodes[i] = null;
  }

  private static void killTree(Process p, Path pgdata) throws Exception {
    // The services first (runuser and pg_autoctl's processes), so none starts PostgreSQL again;
    // then every PostgreSQL process of the node.
    List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
    p.destroyForcibly();
    for (ProcessHandle h : all) {
      if (!h.info().command().orElse("").endsWith("/postgres")) {
        h.destroyForcibly();
      }
    }
    Path pidFile = pgdata.resolve("postmaster.pid");
    if (Files.exists(pidFile)) {
      long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).strip());
      ProcessHandle.of(pid).ifPresent(all::add);
    }
    for (ProcessHandle h : all) {
      h.destroyForcibly();
    }
    p.waitFor(30, TimeUnit.SECONDS);
    for (ProcessHandle h : all) {
      h.onExit().orTimeout(30, TimeUnit.SECONDS).join();
    }
  }

  /** The node's service started again: it rejoins as a standby (rewound if it must be). */
  void restartNode(String name) throws IOException {
    int i = name.equals("node1") ? 0 : 1;
    nodes[i] = startNode(i, false);
  }

  /** A switchover ordered through the monitor: the standby becomes primary, the primary standby. */
  void switchover() throws Exception {
    autoctl("perform", "switchover", "--pgdata", root.resolve("monitor").toString());
  }

  /** Waits (up to two minutes) until the monitor reports each named node in its state. */
  void awaitStates(Map<String, String> wanted) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    Map<String, String[]> now = Map.of();
    while (System.nanoTime() < deadline) {
      now = states();
      boolean all = true;
      for (Map.Entry<String, String> w : wanted.entrySet()) {
        String[] s = now.get(w.getKey());
        all &= s != null && s[0].equals(w.getValue()) && s[1].equals(w.getValue());
      }
      if (all) {
        return;
      }
      Thread.sleep(250);
    }
    StringBuilder seen = new StringBuilder();
    now.forEach(
        (k, v) -> seen.append(k).append('=').append(v[0]).append('/').append(v[1]).append(' '));
    throw new IllegalStateException("the formation did not reach " + wanted + "; it is " + seen);
  }

  /** Node name to {reported state, assigned state}, from the monitor. */
  Map<String, String[]> states() throws Exception {
    Map<String, String[]> out = new LinkedHashMap<>();
    JsonNode nodes =
        JSON.readTree(
            autoctl("show", "state", "--json", "--pgdata", root.resolve("monitor").toString()));
    for (JsonNode n : nodes) {
      out.put(
          n.path("nodename").asText(),
          new String[] {
            n.path("current_group_state").asText(), n.path("assigned_group_state").asText()
          });
    }
    return out;
  }

  private void awaitSynchronousStandbyNames(String wanted) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (true) {
      String now = psql(ports[0], "postgres", "SHOW synchronous_standby_names").strip();
      if (now.equals(wanted)) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("synchronous_standby_names stayed '" + now + "'");
      }
      Thread.sleep(250);
    }
  }

  private void awaitMonitor() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (true) {
      try {
        psql(monitorPort, "pg_auto_failover", "SELECT 1");
        return;
      } catch (IllegalStateException e) {
        if (System.nanoTime() > deadline || !monitor.isAlive()) {
          throw new IllegalStateException(
              "the monitor did not come up: " + tail(root.resolve("monitor.log")), e);
        }
        Thread.sleep(250);
      }
    }
  }

  private String monitorUri() {
    return "postgres://autoctl_node@localhost:" + monitorPort + "/pg_auto_failover?sslmode=disable";
  }

  private Process service(String name, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(asPostgres());
    cmd.add(PG_AUTOCTL.toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(root.resolve(name + ".log").toFile()));
    pb.environment().put("PATH", BIN + ":" + System.getenv("PATH"));
    pb.directory(root.toFile());
    return pb.start();
  }

  private String autoctl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(asPostgres());
    cmd.add(PG_AUTOCTL.toString());
    cmd.addAll(List.of(args));
    return run(cmd);
  }

  /** Runs each statement in a transaction of its own. */
  private String psql(int port, String db, String... statements) throws Exception {
    List<String> cmd = new ArrayList<>(asPostgres());
    cmd.addAll(List.of("psql", "-X", "-q", "-t", "-A", "-h", "localhost"));
    cmd.addAll(List.of("-p", Integer.toString(port), "-U", "postgres", "-d", db));
    cmd.addAll(List.of("-v", "ON_ERROR_STOP=1"));
    for (String sql : statements) {
      cmd.add("-c");
      cmd.add(sql);
    }
    return run(cmd);
  }

  private String run(List<String> cmd) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("PATH", BIN + ":" + System.getenv("PATH"));
    pb.directory(root.toFile());
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed: " + err.strip());
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  private static List<String> asPostgres() {
    return "root".equals(System.getProperty("user.name"))
        ? List.of("runuser", "-u", "postgres", "--")
        : List.of();
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static void sh(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed");
    }
  }

  @Override
  public void close() {
    for (int i = 0; i < nodes.length; i++) {
      if (nodes[i] != null) {
        try {
          killNode("node" + (i + 1));
        } catch (Exception e) {
          // going anyway
        }
      }
    }
    if (monitor != null) {
      try {
        killTree(monitor, root.resolve("monitor"));
      } catch (Exception e) {
        // going anyway
      }
    }
    try {
      sh("rm", "-rf", root.toString());
    } catch (IOException | InterruptedException e) {
      // a temporary directory left behind
    }
  }
}
