package dev.pgworkflows.workflows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A run that waits for "done" while its update "add" counts in its state; each execution of the
 * handler is recorded in a file, so a test can count them across processes. With {@code hang} set
 * the handler blocks forever once recorded: the process is meant to be killed there.
 */
public final class HangingUpdateWorkflow {
  private HangingUpdateWorkflow() {}

  public static Workflow<String, Integer> define(Path log, boolean hang) {
    return Workflow.define("hanging-update", String.class, Integer.class)
        .onUpdate(
            "add",
            Integer.class,
            (ctx, n) -> {
              CrashyWorkflow.record(log, "add");
              if (hang) {
                Thread.sleep(Long.MAX_VALUE);
              }
              Integer count = ctx.state().get("count", Integer.class);
              int now = (count == null ? 0 : count) + n;
              ctx.state().put("count", now);
              return now;
            })
        .run(
            (ctx, in) -> {
              ctx.step().waitForEvent("done", Map.class, Match.any(), Duration.ofHours(1));
              return ctx.state().get("count", Integer.class);
            });
  }

  /**
   * Child process: serves the workflow with a two-second lease, its handler hanging, until killed.
   */
  public static void main(String[] args) throws Exception {
    define(Path.of(args[1]), true)
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
