package dev.pgworkflows.server.testing;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.Main;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The server's {@link Main} in a JVM of its own, on the embedded PostgreSQL it starts in a given
 * data directory, as a user runs it: so a test can send it real signals. Its output goes to a file
 * the test reads.
 */
public final class ServerProcess implements AutoCloseable {
  private final Process process;
  private final Path dataDir;
  private final Path output;
  private final int port;

  private ServerProcess(Process process, Path dataDir, Path output, int port) {
    this.process = process;
    this.dataDir = dataDir;
    this.output = output;
    this.port = port;
  }

  /**
   * Starts {@code java dev.pgworkflows.server.Main} on this test class path, HTTP on {@code port},
   * embedded PostgreSQL on {@code pgPort} with its data under {@code dataDir}, its output appended
   * to {@code output}.
   */
  public static ServerProcess start(Path dataDir, int port, int pgPort, Path output)
      throws IOException {
    return start(dataDir, port, pgPort, output, Map.of());
  }

  /** As {@link #start(Path, int, int, Path)}, with {@code env} added to its environment last. */
  public static ServerProcess start(
      Path dataDir, int port, int pgPort, Path output, Map<String, String> env) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    // Two logback-test.xml on this class path (the sql module's test jar has one): no status dump.
    cmd.add("-Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()));
    // The embedded database, whatever the environment of the build says.
    pb.environment().remove("DATABASE_URL");
    pb.environment().remove("WORKFLOWS_DATABASE_URL");
    // Tracing as the test says, whatever the build's shell exports.
    pb.environment().keySet().removeIf(k -> k.startsWith("OTEL_") || k.startsWith("OTLP_"));
    pb.environment().put("WORKFLOWS_PORT", Integer.toString(port));
    pb.environment().put("WORKFLOWS_EMBEDDED_PG_PORT", Integer.toString(pgPort));
    pb.environment().put("WORKFLOWS_DATA_DIR", dataDir.toString());
    pb.environment().put("WORKFLOWS_DB_POOL_SIZE", "4");
    pb.environment().putAll(env);
    return new ServerProcess(pb.start(), dataDir, output, port);
  }

  /** A port nobody listens on now. */
  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  public String url() {
    return "http://localhost:" + port;
  }

  public Api api() {
    return new Api(url(), "token");
  }

  public Process process() {
    return process;
  }

  /** Until {@code /readyz} answers 200; fails at once when the process has ended. */
  public void awaitReady(Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() - deadline < 0) {
      if (!process.isAlive()) {
        throw new AssertionError(
            "the server exited with " + process.exitValue() + " before it was ready:\n" + log());
      }
      try {
        if (api().withToken(null).get("/readyz").status() == 200) {
          return;
        }
      } catch (UncheckedIOException e) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the server was not ready within " + within + ":\n" + log());
  }

  /** Sends SIGTERM. */
  public void sigterm() {
    process.destroy();
  }

  /** Sends SIGKILL and waits for the process to be gone. */
  public void sigkill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** The exit code, once the process ended within {@code within}. */
  public int awaitExit(Duration within) throws InterruptedException {
    if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("the server did not exit within " + within + ":\n" + log());
    }
    return process.exitValue();
  }

  /** Everything the process wrote so far (and what earlier processes wrote to the same file). */
  public String log() {
    try {
      return Files.readString(output, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The embedded PostgreSQL's postmaster, as its data directory names it, while it runs. */
  public Optional<ProcessHandle> postmaster() {
    return postmaster(dataDir);
  }

  /** The postmaster {@code dataDir/postgres/postmaster.pid} names, if that process is alive. */
  public static Optional<ProcessHandle> postmaster(Path dataDir) {
    Path pidFile = dataDir.resolve("postgres").resolve("postmaster.pid");
    try {
      List<String> lines = Files.readAllLines(pidFile);
      return lines.isEmpty()
          ? Optional.empty()
          : ProcessHandle.of(Long.parseLong(lines.get(0).strip())).filter(ProcessHandle::isAlive);
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Kills the JVM if it still runs and stops a postmaster it left (SIGTERM, which PostgreSQL takes
   * as a smart shutdown), so a failed test leaves no process behind.
   */
  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.onExit().join();
    }
    Optional<ProcessHandle> left = postmaster();
    if (left.isPresent()) {
      left.get().destroy();
      left.get().onExit().completeOnTimeout(null, 30, TimeUnit.SECONDS).join();
    }
  }
}
