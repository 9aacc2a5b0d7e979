package dev.pgworkflows.examples;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.Concurrency;
import dev.pgworkflows.workflows.EventBatch;
import dev.pgworkflows.workflows.Throttle;
import dev.pgworkflows.workflows.Topics;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The README's batched clicks, against the server of its first command on port 7700: a workflow fed
 * by a topic in batches, its starts throttled and its keys sharing a total in turn. The body of
 * {@link #main} is the README's block, line for line (checked by a test; the build runs this class
 * against a server, see .ci/run).
 */
public final class ClickBatches {
  private ClickBatches() {}

  public static void main(String[] args) {
    // docs: begin
    // spotless:off
    Workflow<JsonNode, Integer> tally = Workflow.define("tally", JsonNode.class, Integer.class)
        .concurrency(Concurrency.limit(2).total(4).weights(Map.of("acme", 3)))  // keys in turn
        .throttle(Throttle.of(50, Duration.ofSeconds(1)).burst(10))            // 50 starts a second
        .run((ctx, clicks) -> ctx.step().run("count", Integer.class, clicks::size));

    Worker worker = tally.serve(WorkerOptions.url("http://localhost:7700").token("dev"));
    WorkflowClient client = WorkflowClient.connect("http://localhost:7700", "dev");
    client.topics().subscribe("clicks.#", "tally", EventBatch.of(3, Duration.ofSeconds(10)));
    for (int n = 1; n <= 3; n++) {
      List<Topics.Delivery> went = client.topics().publish("clicks.home", Map.of("n", n));
      if (went.get(0).type().equals("workflow")) {                             // the batch is full
        int size = client.runs().awaitResult("tally", went.get(0).id(), Integer.class, Duration.ofSeconds(30));
        System.out.println("one run for a batch of " + size + " clicks");
      }
    }
    worker.close();
    // spotless:on
    // docs: end
  }
}
