package dev.pgworkflows.workflows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A workflow that writes to its stream "out" from the body and from steps. With {@code hang} set,
 * step "hang" writes its first entry, marks the file and blocks forever: the process is meant to be
 * killed there, and a worker without {@code hang} replays the run to its end.
 */
public final class StreamsWorkflow {
  private StreamsWorkflow() {}

  public static Workflow<String, String> define(Path marker, boolean hang) {
    return Workflow.define("streams-replay", String.class, String.class)
        .run(
            (ctx, in) -> {
              RunStream out = ctx.stream("out");
              out.write("b0");
              ctx.step().run("s1", () -> out.write("s1-0"));
              out.write("b1");
              ctx.step()
                  .run(
                      "hang",
                      () -> {
                        out.write("h0");
                        if (hang) {
                          Files.writeString(marker, "hanging");
                          Thread.sleep(Long.MAX_VALUE);
                        }
                        out.write("h1");
                      });
              out.write("b2");
              out.close();
              return "done";
            });
  }

  /**
   * Child process: serves the workflow, hanging in step "hang", with a short lease until killed.
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
