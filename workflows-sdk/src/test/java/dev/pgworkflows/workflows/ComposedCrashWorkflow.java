package dev.pgworkflows.workflows;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A parent that starts a child, runs a step, then waits for a signal and the child's result; each
 * execution of the parent's step and the child's step is recorded in a file. With {@code hang} the
 * parent's step blocks forever: the process is meant to be killed there, after the child started
 * and while a signal sent meanwhile sits in the inbox.
 */
public final class ComposedCrashWorkflow {
  private ComposedCrashWorkflow() {}

  public static Workflow<String, String> child(Path log) {
    return Workflow.define("crash-kid", String.class, String.class)
        .run(
            (ctx, in) ->
                ctx.step().run("work", String.class, () -> CrashyWorkflow.record(log, "kid")));
  }

  public static Workflow<String, String> parent(Path log, boolean hang) {
    Workflow<String, String> kid = child(log);
    return Workflow.define("crash-parent", String.class, String.class)
        .run(
            (ctx, in) -> {
              ChildRun<String> c = ctx.step().startChild("kid", kid, in);
              ctx.step()
                  .run(
                      "between",
                      () -> {
                        CrashyWorkflow.record(log, "between");
                        if (hang) {
                          Thread.sleep(Long.MAX_VALUE);
                        }
                      });
              String go =
                  ctx.step()
                      .waitForEvent("go", String.class, Match.any(), Duration.ofHours(1))
                      .orElse("none");
              return c.result() + "+" + go;
            });
  }

  /** Child process: serves the parent workflow only (its step hangs) until killed. */
  public static void main(String[] args) throws Exception {
    parent(Path.of(args[1]), true)
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
