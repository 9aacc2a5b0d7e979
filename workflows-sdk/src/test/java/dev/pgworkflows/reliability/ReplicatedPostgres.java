package dev.pgworkflows.reliability;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * Two PostgreSQL 18 servers from zonky's embedded binaries: a primary and a streaming standby that
 * the primary waits for at every commit (synchronous replication, {@code synchronous_commit=on}).
 *
 * <p>The bundle has no pg_basebackup, so the standby's base is a copy of the primary's data
 * directory taken while the primary is cleanly stopped (a shutdown checkpoint, nothing to replay);
 * {@code standby.signal} and {@code primary_conninfo} make it a standby. {@code initdb -A trust}
 * (as zonky runs it) already lets loopback connect for replication.
 *
 * <p>Both postmasters are this object's child processes; {@link #close()}, and a shutdown hook if
 * the JVM ends first, kill whichever still runs, then delete both data directories.
 */
final class ReplicatedPostgres implements AutoCloseable {
  static final String STANDBY_NAME = "replica1";

  private final Path root;
  private final String postgresBinary;
  private final Node primary;
  private final Node standby;
  private final Thread hook = new Thread(this::killAll, "replicated-postgres-cleanup");

  private record Node(String name, Path dataDir, int port, Process[] process) {
    Path log() {
      return dataDir.resolveSibling(name + ".log");
    }
  }

  private ReplicatedPostgres(Path root, String postgresBinary, int primaryPort, int standbyPort) {
    this.root = root;
    this.postgresBinary = postgresBinary;
    this.primary = new Node("primary", root.resolve("primary"), primaryPort, new Process[1]);
    this.standby = new Node("standby", root.resolve("standby"), standbyPort, new Process[1]);
  }

  /** Starts both servers and returns once the standby streams as the synchronous standby. */
  static ReplicatedPostgres start() throws Exception {
    Path root = Files.createTempDirectory("pgwf-failover");
    ReplicatedPostgres pg = null;
    boolean started = false;
    try {
      Path primaryDir = root.resolve("primary");
      // zonky runs initdb (and extracts the binaries); its server is stopped cleanly at once, and
      // its data directory is copied only once that postmaster has exited.
      String binary;
      ProcessHandle zonkyPostmaster;
      EmbeddedPostgres zonky =
          EmbeddedPostgres.builder()
              .setDataDirectory(primaryDir)
              .setCleanDataDirectory(false)
              .start();
      try {
        zonkyPostmaster = postmasterOf(primaryDir);
        binary = zonkyPostmaster.info().command().orElseThrow();
      } finally {
        zonky.close();
      }
      try {
        zonkyPostmaster.onExit().get(10, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        zonkyPostmaster.destroyForcibly();
        throw new IllegalStateException("zonky's postmaster did not stop in 10 s", e);
      }
      pg = new ReplicatedPostgres(root, binary, freePort(), freePort());
      Runtime.getRuntime().addShutdownHook(pg.hook);
      pg.makeStandbyBase();
      pg.launch(pg.primary, List.of("synchronous_standby_names=" + STANDBY_NAME));
      pg.awaitConnectable(pg.primary, false);
      pg.launch(pg.standby, List.of());
      pg.awaitConnectable(pg.standby, true);
      pg.awaitSynchronousStandby();
      started = true;
      return pg;
    } finally {
      // Once started, the caller closes it; a start that failed leaves no process and no files.
      if (!started && pg != null) {
        pg.close();
      } else if (!started) {
        deleteTree(root);
      }
    }
  }

  /** Both servers, primary first, with {@code targetServerType=primary}. */
  String multiHostJdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:"
        + primary.port
        + ",127.0.0.1:"
        + standby.port
        + "/postgres?targetServerType=primary";
  }

  String standbyJdbcUrl() {
    return url(standby);
  }

  /**
   * The primary's PostgreSQL crashes: SIGKILL to its postmaster and every backend at once, so no
   * process gets to write, ship or acknowledge anything more. The host itself stays up, so its
   * kernel resets their connections at once; a host lost silently (power, network) is a different
   * case, which this does not reproduce.
   */
  void killPrimary() throws Exception {
    kill(primary);
  }

  /** Promotes the standby and returns once it accepts writes. */
  void promoteStandby() throws SQLException {
    try (Connection c = connect(standby);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_promote(true, 60)")) {
      rs.next();
      if (!rs.getBoolean(1)) {
        throw new IllegalStateException("the standby was not promoted in 60 s: " + tail(standby));
      }
    }
  }

  private void makeStandbyBase() throws IOException {
    Set<String> skipped = Set.of("postmaster.pid", "postmaster.opts", "epg-lock");
    Files.walkFileTree(
        primary.dataDir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            Files.copy(
                dir,
                standby.dataDir.resolve(primary.dataDir.relativize(dir)),
                StandardCopyOption.COPY_ATTRIBUTES);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            if (!skipped.contains(file.getFileName().toString())) {
              Files.copy(
                  file,
                  standby.dataDir.resolve(primary.dataDir.relativize(file)),
                  StandardCopyOption.COPY_ATTRIBUTES);
            }
            return FileVisitResult.CONTINUE;
          }
        });
    Files.createFile(standby.dataDir.resolve("standby.signal"));
    Files.writeString(
        standby.dataDir.resolve("postgresql.auto.conf"),
        "primary_conninfo = 'host=127.0.0.1 port="
            + primary.port
            + " user=postgres application_name="
            + STANDBY_NAME
            + "'\n",
        java.nio.file.StandardOpenOption.APPEND);
  }

  private void launch(Node node, List<String> settings) throws IOException {
    List<String> cmd = new ArrayList<>();
    if ("root".equals(System.getProperty("user.name"))) {
      // As zonky does: PostgreSQL refuses to run as root, so run it in a user namespace.
      cmd.addAll(List.of("unshare", "-U"));
    }
    cmd.addAll(List.of(postgresBinary, "-D", node.dataDir.toString(), "-p", "" + node.port));
    List<String> all = new ArrayList<>();
    all.add("listen_addresses=127.0.0.1");
    all.add("unix_socket_directories=" + root);
    // Commits wait for the standby's flush (once one is named): acknowledged means on both.
    all.add("synchronous_commit=on");
    all.add("wal_level=replica");
    all.add("max_wal_senders=10");
    all.add("hot_standby=on");
    // As zonky's first start had it: a standby needs at least the primary's settings.
    all.add("max_connections=300");
    all.addAll(settings);
    for (String s : all) {
      cmd.add("-c");
      cmd.add(s);
    }
    node.process[0] =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(node.log().toFile()))
            .start();
  }

  /**
   * Returns once {@code node} answers on its port, and is what it should be: in recovery for the
   * standby, not for the primary (so the port is not some other server's).
   */
  private void awaitConnectable(Node node, boolean inRecovery) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    SQLException last = null;
    while (System.currentTimeMillis() < deadline && node.process[0].isAlive()) {
      try (Connection c = connect(node);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT pg_is_in_recovery()")) {
        rs.next();
        if (rs.getBoolean(1) != inRecovery) {
          throw new IllegalStateException(
              "port " + node.port + " is not " + node.name + "'s server:\n" + tail(node));
        }
        return;
      } catch (SQLException e) {
        last = e;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(node.name + " did not come up:\n" + tail(node), last);
  }

  private void awaitSynchronousStandby() throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    try (Connection c = connect(primary);
        Statement s = c.createStatement()) {
      while (true) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = '"
                    + STANDBY_NAME
                    + "'")) {
          if (rs.next() && "streaming".equals(rs.getString(1)) && "sync".equals(rs.getString(2))) {
            return;
          }
        }
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException(
              "the standby never streamed synchronously:\n" + tail(primary) + "\n" + tail(standby));
        }
        Thread.sleep(100);
      }
    }
  }

  private static Connection connect(Node node) throws SQLException {
    return DriverManager.getConnection(url(node), "postgres", "");
  }

  private static String url(Node node) {
    return "jdbc:postgresql://127.0.0.1:" + node.port + "/postgres";
  }

  private static String tail(Node node) {
    try {
      List<String> lines = Files.readAllLines(node.log());
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** The postmaster zonky started on {@code dir}, which names the binary zonky extracted. */
  private static ProcessHandle postmasterOf(Path dir) {
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().command().orElse("").endsWith("/bin/postgres"))
        .filter(p -> List.of(p.info().arguments().orElse(new String[0])).contains(dir.toString()))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no postmaster for " + dir));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /**
   * SIGKILL to the node's postmaster (this JVM's direct child: {@code unshare} execs it) and its
   * backends, waiting at most 10 s for each to be gone.
   */
  private static void kill(Node node) throws InterruptedException, ExecutionException {
    Process p = node.process[0];
    if (p == null) {
      return;
    }
    List<ProcessHandle> backends = p.descendants().toList();
    p.destroyForcibly();
    backends.forEach(ProcessHandle::destroyForcibly);
    if (!p.waitFor(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException(node.name + "'s postmaster outlived SIGKILL by 10 s");
    }
    for (ProcessHandle h : backends) {
      try {
        h.onExit().get(10, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new IllegalStateException(node.name + " backend " + h.pid() + " outlived SIGKILL", e);
      }
    }
  }

  private void killAll() {
    RuntimeException failed = null;
    for (Node node : List.of(primary, standby)) {
      try {
        kill(node);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failed = new IllegalStateException("interrupted while stopping " + node.name, e);
      } catch (ExecutionException | RuntimeException e) {
        failed = new IllegalStateException("stopping " + node.name + " failed", e);
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  @Override
  public void close() {
    try {
      killAll();
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // the JVM is exiting: the hook has run
      }
      deleteTree(root);
    }
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
