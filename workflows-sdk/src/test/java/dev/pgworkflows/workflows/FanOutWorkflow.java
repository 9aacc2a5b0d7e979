package dev.pgworkflows.workflows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A workflow of one parallel group, branches "a", "b", "c" and "slow", that records each branch
 * execution in a file (to count them across processes) and in a map of counters. With {@code hang}
 * set, "slow" blocks forever: the process is meant to be killed while it runs, once the other
 * branches are journaled.
 */
public final class FanOutWorkflow {
  static final String NAME = "fan-crash";

  private FanOutWorkflow() {}

  static Workflow<String, String> define(
      Path log, boolean hang, Map<String, AtomicInteger> executions) {
    return Workflow.define(NAME, String.class, String.class)
        .run(
            (ctx, in) -> {
              List<String> out =
                  ctx.step()
                      .parallel(
                          List.of(
                              branch("a", log, executions),
                              branch("b", log, executions),
                              branch("c", log, executions),
                              Branch.of(
                                  "slow",
                                  String.class,
                                  () -> {
                                    record("slow", log, executions);
                                    if (hang) {
                                      Thread.sleep(Long.MAX_VALUE);
                                    }
                                    return "s";
                                  },
                                  Retry.none())));
              return String.join("", out);
            });
  }

  private static Branch<String> branch(
      String name, Path log, Map<String, AtomicInteger> executions) {
    return Branch.of(name, String.class, () -> record(name, log, executions), Retry.none());
  }

  private static String record(String name, Path log, Map<String, AtomicInteger> executions)
      throws IOException {
    executions.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
    Files.writeString(
        log,
        name + "\n",
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND,
        StandardOpenOption.SYNC);
    return name;
  }

  /** Child process: serves the workflow with a short lease, "slow" hanging, until killed. */
  public static void main(String[] args) throws Exception {
    define(Path.of(args[1]), true, new ConcurrentHashMap<>())
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
