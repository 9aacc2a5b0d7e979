package dev.pgworkflows.workflows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A subscription that renews: each run charges once (a step that appends {@code <run> <period>} to
 * a log) and continues as new with the next period, until {@code last}; then it returns {@code
 * "done <period>"}. With {@code hangAt} set, the body hangs after that period's charge and before
 * its continuation (the charge's completion still held): the process is meant to be killed there.
 */
public final class RenewingWorkflow {
  private RenewingWorkflow() {}

  public static Workflow<Integer, String> define(Path log, int last, int hangAt, long stepMs) {
    return Workflow.define("renewing", Integer.class, String.class)
        .run(
            (ctx, period) -> {
              long run = ctx.runId();
              ctx.step()
                  .run(
                      "charge",
                      () -> {
                        Files.writeString(
                            log,
                            run + " " + period + "\n",
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND,
                            StandardOpenOption.SYNC);
                        Thread.sleep(stepMs);
                      });
              if (period == hangAt) {
                hang();
              }
              if (period >= last) {
                return "done " + period;
              }
              return ctx.continueAsNew(period + 1);
            });
  }

  private static void hang() {
    try {
      Thread.sleep(Long.MAX_VALUE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Child process: serves the workflow with a short lease until killed. Arguments: server url, log,
   * last period, the period to hang at (-1: none), the charge's duration in ms.
   */
  public static void main(String[] args) throws Exception {
    define(
            Path.of(args[1]),
            Integer.parseInt(args[2]),
            Integer.parseInt(args[3]),
            Long.parseLong(args[4]))
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
