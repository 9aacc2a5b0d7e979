package dev.pgworkflows.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.time.Duration;

/**
 * Java beside Node on one server: a Java worker serving {@code java-invoice}, and the Java client
 * starting and awaiting runs of any workflow, whichever language serves it. The TypeScript SDK's
 * tests drive it (clients/typescript/test/interop.test.mjs); the server is {@code $WORKFLOWS_URL}
 * with the token {@code $WORKFLOWS_TOKEN}.
 *
 * <ul>
 *   <li>{@code serve}: serves {@code java-invoice} (and {@code java-burn}, ten trivial steps, for
 *       the TypeScript SDK's burn-down) until its standard input closes.
 *   <li>{@code start WORKFLOW INPUT_JSON}: starts a run, prints its id.
 *   <li>{@code await WORKFLOW RUN_ID}: prints the run's output as JSON once it completes.
 * </ul>
 */
public final class Polyglot {
  private Polyglot() {}

  private static final ObjectMapper JSON = new ObjectMapper();

  /** An invoice's total: the amount with 20 % tax, priced by a Java step. */
  static final Workflow<JsonNode, JsonNode> INVOICE =
      Workflow.define("java-invoice", JsonNode.class, JsonNode.class)
          .run(
              (ctx, in) -> {
                long total =
                    ctx.step()
                        .run(
                            "price",
                            Long.class,
                            () -> Math.round(in.path("amount").asDouble() * 1.2));
                ObjectNode out = JSON.createObjectNode();
                out.put("customer", in.path("customer").asText());
                out.put("total", total);
                out.put("by", "java");
                return out;
              });

  /** Ten trivial steps: what the TypeScript SDK's burn-down compares a Node worker with. */
  static final Workflow<Integer, Integer> BURN =
      Workflow.define("java-burn", Integer.class, Integer.class)
          .run(
              (ctx, n) -> {
                int v = n;
                for (int i = 0; i < 10; i++) {
                  int before = v;
                  v = ctx.step().run("s" + i, Integer.class, () -> before + 1);
                }
                return v;
              });

  public static void main(String[] args) throws IOException {
    String url = System.getenv().getOrDefault("WORKFLOWS_URL", "http://localhost:7700");
    String token = System.getenv("WORKFLOWS_TOKEN");
    if (args.length == 0) {
      System.err.println(
          "usage: Polyglot serve | start WORKFLOW INPUT_JSON | await WORKFLOW RUN_ID");
      System.exit(2);
    }
    switch (args[0]) {
      case "serve" -> {
        Worker invoices = INVOICE.serve(WorkerOptions.url(url).token(token));
        Worker burn = BURN.serve(WorkerOptions.url(url).token(token).concurrency(16));
        System.out.println("serving java-invoice and java-burn");
        System.out.flush();
        while (System.in.read() >= 0) {
          // serve until the standard input closes
        }
        burn.close();
        invoices.close();
      }
      case "start" -> {
        WorkflowClient client = WorkflowClient.connect(url, token);
        long runId = client.start(args[1], JSON.readTree(args[2])).runId();
        System.out.println(runId);
      }
      case "await" -> {
        WorkflowClient client = WorkflowClient.connect(url, token);
        JsonNode out =
            client
                .runs()
                .awaitResult(
                    args[1], Long.parseLong(args[2]), JsonNode.class, Duration.ofSeconds(60));
        System.out.println(JSON.writeValueAsString(out));
      }
      default -> {
        System.err.println("unknown command " + args[0]);
        System.exit(2);
      }
    }
  }
}
