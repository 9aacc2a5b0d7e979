package dev.pgworkflows.workflows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A workflow that sets run state from its body and its steps and reads it back in the body; its
 * second step records what the body read in a file and marks the state with who ran it. With {@code
 * hang} set that step blocks forever: the process is meant to be killed there.
 */
public final class StateWorkflow {
  private StateWorkflow() {}

  public static Workflow<String, String> define(Path log, boolean hang) {
    return Workflow.define("stateful", String.class, String.class)
        .run(
            (ctx, in) -> {
              ctx.state().put("phase", "started");
              ctx.step().run("first", () -> ctx.state().put("progress", 1));
              String seen =
                  ctx.state().get("phase", String.class)
                      + ":"
                      + ctx.state().get("progress", Integer.class)
                      + ":"
                      + ctx.state().get("ranBy", String.class);
              ctx.state().put("seen", seen);
              ctx.step()
                  .run(
                      "second",
                      () -> {
                        ctx.state().put("progress", 2);
                        ctx.state().put("ranBy", hang ? "killed" : "survivor");
                        Files.writeString(
                            log,
                            seen + "\n",
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND,
                            StandardOpenOption.SYNC);
                        if (hang) {
                          Thread.sleep(Long.MAX_VALUE);
                        }
                      });
              return seen + "|" + ctx.state().get("progress", Integer.class);
            });
  }

  /** Child process: serves the workflow, hanging in its second step, with a short lease. */
  public static void main(String[] args) throws Exception {
    define(Path.of(args[1]), true)
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
