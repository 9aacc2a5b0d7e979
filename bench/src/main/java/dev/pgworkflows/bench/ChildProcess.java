package dev.pgworkflows.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A main class of this jar in a JVM of its own (a server, a worker), and waiting for a server. */
final class ChildProcess {
  private ChildProcess() {}

  /**
   * Starts {@code main} with {@code jvmFlags}, {@code args} and {@code env} added to this process's
   * environment, on the JVM this one runs on; its output goes to {@code log}.
   */
  static Process java(
      String main, List<String> jvmFlags, List<String> args, Map<String, String> env, Path log)
      throws IOException {
    String java =
        ProcessHandle.current()
            .info()
            .command()
            .orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(jvmFlags);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    return pb.start();
  }

  /** Waits up to 60 s for the server at {@code url} to answer {@code /readyz} with 200. */
  static void awaitReady(String url, Process server) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (!server.isAlive()) {
        throw new IllegalStateException("the server exited; see its log");
      }
      try {
        HttpResponse<Void> res =
            http.send(
                HttpRequest.newBuilder(URI.create(url + "/readyz")).build(),
                HttpResponse.BodyHandlers.discarding());
        if (res.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the server at " + url + " was not ready within 60 s");
  }
}
