package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.AttributeType;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.Map;

/**
 * The README's invoices, against the server of its first command on port 7700: runs started with
 * search attributes, one more set by the body, and the runs a query selects. The body of {@link
 * #main} is the README's block, line for line (checked by a test; the build runs this class against
 * a server, see .ci/run).
 */
public final class FindRuns {
  private FindRuns() {}

  public static void main(String[] args) {
    // docs: begin
    // spotless:off
    WorkflowClient client = WorkflowClient.connect("http://localhost:7700", "dev");
    client.runs().defineAttribute("customer", AttributeType.TEXT);
    client.runs().defineAttribute("amount", AttributeType.NUMBER);
    client.runs().defineAttribute("stage", AttributeType.TEXT);

    Workflow<Integer, String> invoice = Workflow.define("invoice", Integer.class, String.class)
        .run((ctx, amount) -> {
          String receipt = ctx.step().run("charge", String.class, () -> "charged " + amount);
          ctx.attributes().set("stage", "charged");                   // from the body, once
          return receipt;
        });
    Worker worker = invoice.serve(WorkerOptions.url("http://localhost:7700").token("dev"));
    for (int amount : new int[] {40, 250, 900}) {
      StartOptions options = StartOptions.builder()
          .attributes(Map.of("customer", amount > 100 ? "acme" : "globex", "amount", amount))
          .build();
      Started run = client.start(invoice, amount, options);
      client.runs().awaitResult("invoice", run.runId(), String.class, Duration.ofSeconds(30));
    }
    String query = "customer = 'acme' AND amount >= 100 AND stage = 'charged'";
    for (RunInfo run : client.runs().search(query, null, 10).runs()) {
      System.out.println(run.workflow() + " of " + run.input() + ": " + run.status().wire());
    }
    System.out.println(client.runs().count("workflow = 'invoice'") + " invoices in all");
    worker.close();
    // spotless:on
    // docs: end
  }
}
