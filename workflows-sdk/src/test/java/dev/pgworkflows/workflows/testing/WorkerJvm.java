package dev.pgworkflows.workflows.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts a main class of this test class path (a worker, as a rule) in a JVM of its own, so that a
 * test can SIGKILL it mid-step; its output goes to {@code output}.
 */
public final class WorkerJvm {
  private WorkerJvm() {}

  public static Process start(Class<?> main, Path output, String... args) throws IOException {
    return start(main, output, Map.of(), args);
  }

  /**
   * As {@link #start(Class, Path, String...)}, with {@code env} added to its environment, in which
   * no inherited {@code OTEL_*} variable is left.
   */
  public static Process start(Class<?> main, Path output, Map<String, String> env, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile());
    // Tracing as the test says, whatever the build's shell exports.
    pb.environment().keySet().removeIf(k -> k.startsWith("OTEL_"));
    pb.environment().putAll(env);
    return pb.start();
  }
}
