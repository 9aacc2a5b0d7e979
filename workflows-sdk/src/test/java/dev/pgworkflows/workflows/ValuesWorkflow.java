package dev.pgworkflows.workflows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * A workflow that takes the time, a UUID and a random number outside its steps, then records them
 * in a file from a step. With {@code hang} set the step blocks forever: the process is meant to be
 * killed there.
 */
public final class ValuesWorkflow {
  private ValuesWorkflow() {}

  public static Workflow<String, String> define(Path log, boolean hang) {
    return Workflow.define("values", String.class, String.class)
        .run(
            (ctx, in) -> {
              Instant now = ctx.now();
              UUID id = ctx.randomUUID();
              int draw = ctx.random().nextInt(1_000_000_000);
              String values = now + " " + id + " " + draw;
              ctx.step()
                  .run(
                      "record",
                      () -> {
                        Files.writeString(
                            log,
                            values + "\n",
                            StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND,
                            StandardOpenOption.SYNC);
                        if (hang) {
                          Thread.sleep(Long.MAX_VALUE);
                        }
                      });
              return values;
            });
  }

  /** Child process: serves the workflow, hanging in its step, with a short lease until killed. */
  public static void main(String[] args) throws Exception {
    define(Path.of(args[1]), true)
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2)));
    Thread.sleep(Long.MAX_VALUE);
  }
}
