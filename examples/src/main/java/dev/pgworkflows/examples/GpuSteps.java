package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.Map;

/**
 * The README's captions, against the server of its first command on port 7700: a step that needs a
 * worker with the label {@code gpu=true} waits for one, then runs there. The body of {@link #main}
 * is the README's block, line for line (checked by a test; the build runs this class against a
 * server, see .ci/run).
 */
public final class GpuSteps {
  private GpuSteps() {}

  public static void main(String[] args) throws InterruptedException {
    // docs: begin
    // spotless:off
    Workflow<String, String> caption = Workflow.define("caption", String.class, String.class)
        .run((ctx, image) -> {
          String small = ctx.step().run("resize", String.class, () -> image + " at 512px");
          return ctx.step().onWorkers(Map.of("gpu", "true"))           // only where gpu=true
              .run("describe", String.class, () -> "a cat, in " + small);
        });

    WorkerOptions options = WorkerOptions.url("http://localhost:7700").token("dev");
    WorkflowClient client = WorkflowClient.connect("http://localhost:7700", "dev");
    Worker cpu = caption.serve(options);
    Started run = client.start(caption, "cat.png");
    while (client.runs().blockers("caption", run.runId()).stream()
        .noneMatch(b -> b.kind().equals("no_worker_with_labels"))) {
      Thread.sleep(100);                                             // resize runs on cpu
    }
    System.out.println("describe waits for a worker with gpu=true");
    Worker gpu = caption.serve(options.labels(Map.of("gpu", "true")));
    System.out.println(client.runs().awaitResult("caption", run.runId(), String.class, Duration.ofSeconds(30)));
    cpu.close();
    gpu.close();
    // spotless:on
    // docs: end
  }
}
