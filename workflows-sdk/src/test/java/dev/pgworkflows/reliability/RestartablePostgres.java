package dev.pgworkflows.reliability;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;

/**
 * An embedded PostgreSQL that a test can stop the hard way (SIGQUIT to the postmaster: an immediate
 * shutdown, crash recovery on the next start) and start again on the same data directory and port.
 */
final class RestartablePostgres implements AutoCloseable {
  private final EmbeddedPostgres zonky;
  private final Path dataDir;
  private final List<String> command;
  private Process restarted;

  private RestartablePostgres(EmbeddedPostgres zonky, Path dataDir, List<String> command) {
    this.zonky = zonky;
    this.dataDir = dataDir;
    this.command = command;
  }

  static RestartablePostgres start() throws IOException {
    return start(Files.createTempDirectory("pgwf-restart"));
  }

  /** A new cluster in {@code dir} (made, or emptied first). */
  static RestartablePostgres start(Path dir) throws IOException {
    Files.createDirectories(dir);
    EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .setDataDirectory(dir)
            .setCleanDataDirectory(true)
            // Durable commits, as in production: zonky's default (off) acknowledges commits
            // an immediate shutdown may then lose.
            .setServerConfig("synchronous_commit", "on")
            .start();
    ProcessHandle postmaster = postmaster(dir);
    List<String> cmd = new java.util.ArrayList<>();
    if ("root".equals(System.getProperty("user.name"))) {
      // As zonky does: PostgreSQL refuses to run as root, so run it in a user namespace.
      cmd.addAll(List.of("unshare", "-U"));
    }
    cmd.add(postmaster.info().command().orElseThrow());
    cmd.addAll(List.of(postmaster.info().arguments().orElseThrow()));
    return new RestartablePostgres(pg, dir, cmd);
  }

  private static ProcessHandle postmaster(Path dir) {
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().command().orElse("").endsWith("/bin/postgres"))
        .filter(p -> List.of(p.info().arguments().orElse(new String[0])).contains(dir.toString()))
        .filter(
            p ->
                p.parent()
                    .map(pp -> !pp.info().command().orElse("").endsWith("/bin/postgres"))
                    .orElse(true))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no postmaster for " + dir));
  }

  String jdbcUrl() {
    return zonky.getJdbcUrl("postgres", "postgres");
  }

  /** Whether its postmaster runs. */
  boolean isUp() {
    try {
      return postmaster(dataDir).isAlive();
    } catch (IllegalStateException e) {
      return false;
    }
  }

  /** Immediate shutdown: no checkpoint, every connection cut. */
  void stopImmediately() throws Exception {
    ProcessHandle pm = postmaster(dataDir);
    new ProcessBuilder("kill", "-QUIT", Long.toString(pm.pid())).start().waitFor();
    pm.onExit().get();
  }

  /** Starts the same server again and waits until it accepts connections. */
  void startAgain() throws Exception {
    restarted =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dataDir.resolve("restart.log").toFile())
            .start();
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      try (Connection c = DriverManager.getConnection(jdbcUrl(), "postgres", "postgres")) {
        if (c.isValid(5)) {
          return;
        }
      } catch (SQLException e) {
        if (System.currentTimeMillis() > deadline || !restarted.isAlive()) {
          throw new IllegalStateException(
              "restarted PostgreSQL did not come up: "
                  + command
                  + "\n"
                  + Files.readString(dataDir.resolve("restart.log")),
              e);
        }
        Thread.sleep(100);
      }
    }
  }

  @Override
  public void close() throws IOException {
    if (restarted != null) {
      try {
        stopImmediately();
      } catch (Exception e) {
        throw new IOException("could not stop the restarted server", e);
      }
    }
    try {
      zonky.close();
    } catch (IOException | RuntimeException ignored) {
      // the server it started may already be gone
    }
  }
}
