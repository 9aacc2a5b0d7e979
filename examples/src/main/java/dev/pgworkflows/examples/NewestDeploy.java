package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Concurrency;
import dev.pgworkflows.workflows.ConcurrencyStrategy;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;

/**
 * The README's deploys, against the server of its first command on port 7700: one run per branch,
 * the newest start cancelling the one in progress. The body of {@link #main} is the README's block,
 * line for line (checked by a test; the build runs this class against a server, see .ci/run).
 */
public final class NewestDeploy {
  private NewestDeploy() {}

  public static void main(String[] args) {
    // docs: begin
    // spotless:off
    Workflow<String, String> deploy = Workflow.define("deploy", String.class, String.class)
        .concurrency(Concurrency.limit(1).strategy(ConcurrencyStrategy.CANCEL_IN_PROGRESS))
        .run((ctx, commit) -> {
          ctx.step().waitForEvent("approved", String.class, Match.any(), Duration.ofHours(1));
          return ctx.step().run("ship", String.class, () -> "shipped " + commit);
        });

    Worker worker = deploy.serve(WorkerOptions.url("http://localhost:7700").token("dev"));
    WorkflowClient client = WorkflowClient.connect("http://localhost:7700", "dev");
    StartOptions main = StartOptions.builder().concurrencyKey("main").build();
    Started older = client.start(deploy, "c1", main);
    Started newer = client.start(deploy, "c2", main);
    System.out.println("c2: " + newer.admission() + ", cancelled c1: " + newer.cancelledRuns().contains(older.runId()));
    client.signal("deploy", newer.runId(), "approved", "lgtm");
    System.out.println(client.runs().awaitResult("deploy", newer.runId(), String.class, Duration.ofSeconds(30)));
    worker.close();
    // spotless:on
    // docs: end
  }
}
