package dev.pgworkflows.workflows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A three-step workflow that records each step execution in a file, so a test can count executions
 * across processes. With {@code hang} set, step "two" blocks forever: the process is meant to be
 * killed there.
 */
public final class CrashyWorkflow {
  private CrashyWorkflow() {}

  public static Workflow<String, String> define(Path log, boolean hang) {
    return Workflow.define("crashy", String.class, String.class)
        .run(
            (ctx, in) -> {
              String a = ctx.step().run("one", String.class, () -> record(log, "one"));
              String b =
                  ctx.step()
                      .run(
                          "two",
                          String.class,
                          () -> {
                            record(log, "two");
                            if (hang) {
                              Thread.sleep(Long.MAX_VALUE);
                            }
                            return "2";
                          });
              String c = ctx.step().run("three", String.class, () -> record(log, "three"));
              return a + b + c;
            });
  }

  static String record(Path log, String step) throws IOException {
    Files.writeString(
        log,
        step + "\n",
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND,
        StandardOpenOption.SYNC);
    return step.substring(0, 1);
  }

  /** Child process: serves the workflow with a short lease until killed. */
  public static void main(String[] args) throws Exception {
    Workflow<String, String> wf =
        define(Path.of(args[1]), args.length < 3 || !args[2].equals("nohang"));
    wf.serve(
        WorkerOptions.url(args[0]).pollWait(Duration.ofSeconds(1)).lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
