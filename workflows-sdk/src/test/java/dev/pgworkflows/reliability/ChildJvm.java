package dev.pgworkflows.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Starts a main class of this test class path in a JVM of its own, so it can be SIGKILLed. */
final class ChildJvm {
  private ChildJvm() {}

  static Process start(Class<?> main, Path output, Map<String, String> env, String... args)
      throws IOException {
    return start(List.of(), main, output, env, args);
  }

  static Process start(
      List<String> jvmArgs, Class<?> main, Path output, Map<String, String> env, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()));
    pb.environment().putAll(env);
    return pb.start();
  }

  /**
   * Waits until the server at {@code url} answers {@code /readyz} with 200, for up to 90 s; its
   * output is in {@code output}, whose last lines the failure quotes (the directory is gone by the
   * time anyone reads a CI log).
   */
  static void awaitReady(String url, Path output) throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    long deadline = System.currentTimeMillis() + 90_000;
    while (System.currentTimeMillis() < deadline) {
      try {
        int status =
            http.send(
                    HttpRequest.newBuilder(URI.create(url + "/readyz")).build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode();
        if (status == 200) {
          return;
        }
      } catch (IOException e) {
        // not up yet
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "the server at " + url + " did not start; the last lines of its output:\n" + tail(output));
  }

  private static String tail(Path output) {
    try {
      List<String> lines = Files.readAllLines(output);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(" + output + " could not be read: " + e.getMessage() + ")";
    }
  }

  /** SIGKILL, and wait for the process to be gone. */
  static void kill(Process p) throws InterruptedException {
    p.destroyForcibly();
    p.waitFor();
  }
}
