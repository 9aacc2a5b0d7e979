package dev.pgworkflows.reliability;

import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * The network fault suites' workflow: a step, a sleep, a wait for the signal {@code go} and a step
 * that outlives the worker's lease (so only heartbeats keep it), whose result proves the signal's
 * payload arrived: {@code n + 1 + go.k}. The long step writes {@code hold <run> <begin> <end>} to a
 * shared log for every execution. As a main: serves it against {@code args[0]} until killed.
 */
public final class FaultWorkflow {
  static final String NAME = "net-fault";
  static final Duration LEASE = Duration.ofSeconds(2);
  static final long HOLD_MS = 2_500;

  public record Go(int k) {}

  private FaultWorkflow() {}

  static Workflow<Integer, Integer> define(Path log) {
    return Workflow.define(NAME, Integer.class, Integer.class)
        .run(
            (ctx, n) -> {
              int a = ctx.step().run("a", Integer.class, () -> n + 1);
              ctx.step().sleep("nap", Duration.ofMillis(300));
              Go go =
                  ctx.step()
                      .waitForEvent("go", Go.class, Match.any(), Duration.ofMinutes(10))
                      .orElseThrow();
              long runId = ctx.runId();
              return ctx.step()
                  .run(
                      "hold",
                      Integer.class,
                      () -> {
                        long begin = System.currentTimeMillis();
                        Thread.sleep(HOLD_MS);
                        write(
                            log, "hold " + runId + " " + begin + " " + System.currentTimeMillis());
                        return a + go.k();
                      });
            });
  }

  static WorkerOptions options(String url) {
    return WorkerOptions.url(url).pollWait(Duration.ofSeconds(5)).lease(LEASE).concurrency(32);
  }

  private static synchronized void write(Path log, String line) throws IOException {
    Files.writeString(log, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  public static void main(String[] args) throws Exception {
    define(Path.of(args[1])).serve(options(args[0]));
    Thread.sleep(Long.MAX_VALUE);
  }
}
