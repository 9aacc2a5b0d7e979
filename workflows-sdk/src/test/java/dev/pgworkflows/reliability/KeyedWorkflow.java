package dev.pgworkflows.reliability;

import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A workflow limited to three runs at once per concurrency key by its definition, whose one step
 * writes {@code begin <run> <who> <millis>} and {@code end ...} lines to a shared file, so a test
 * can see from the workers' side how many runs of the key were in a step at once, across processes.
 * As a main: serves it (worker {@code who}) until killed.
 */
public final class KeyedWorkflow {
  static final String NAME = "keyed-crash";
  static final StartOptions KEY = StartOptions.builder().concurrencyKey("tenant").build();

  private KeyedWorkflow() {}

  static Workflow<Integer, Integer> define(Path log, String who) {
    return Workflow.define(NAME, Integer.class, Integer.class)
        .concurrency(3)
        .run(
            (ctx, n) ->
                ctx.step()
                    .run(
                        "work",
                        Integer.class,
                        () -> {
                          write(log, "begin " + n + " " + who);
                          Thread.sleep(150);
                          write(log, "end " + n + " " + who);
                          return n;
                        }));
  }

  private static synchronized void write(Path log, String line) throws IOException {
    Files.writeString(
        log,
        line + " " + System.currentTimeMillis() + "\n",
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND,
        StandardOpenOption.SYNC);
  }

  public static void main(String[] args) throws Exception {
    define(Path.of(args[1]), "doomed")
        .serve(
            WorkerOptions.url(args[0])
                .pollWait(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(2))
                .concurrency(8));
    Thread.sleep(Long.MAX_VALUE);
  }
}
