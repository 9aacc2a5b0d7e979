package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.Optional;

/**
 * The README's workflow in Java, against the server of its first command on port 7700: served,
 * started, signalled and awaited. The body of {@link #main} is the README's block, line for line
 * (checked by a test; the build runs this class against a server, see .ci/run).
 */
public final class FrontDoor {
  private FrontDoor() {}

  public static void main(String[] args) {
    // docs: begin
    // spotless:off
    Workflow<String, String> welcome = Workflow.define("welcome", String.class, String.class)
        .run((ctx, email) -> {
          String user = ctx.step().run("create-user", String.class, () -> "user " + email);
          ctx.step().sleep("welcome-delay", Duration.ofSeconds(2));
          ctx.step().run("send-welcome", () -> System.out.println("welcome, " + user),
              Retry.exponential(5, Duration.ofSeconds(2)));
          Optional<String> code = ctx.step().waitForEvent(
              "verify", String.class, Match.any(), Duration.ofDays(7));
          return code.isPresent() ? user + " is verified" : user + " never verified";
        });

    Worker worker = welcome.serve(WorkerOptions.url("http://localhost:7700").token("dev"));
    WorkflowClient client = WorkflowClient.connect("http://localhost:7700", "dev");
    long runId = client.start(welcome, "ada@example.com", StartOptions.builder().idempotencyKey("ada").build()).runId();
    client.signal("welcome", runId, "verify", "1234");
    System.out.println(client.runs().awaitResult("welcome", runId, String.class, Duration.ofMinutes(1)));
    worker.close();
    // spotless:on
    // docs: end
  }
}
