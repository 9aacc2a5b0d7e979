package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.StartedUpdate;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;

/**
 * The README's cart, against the server of its first command on port 7700: made by its first update
 * (update-with-start), filled and checked out by updates. The body of {@link #main} is the README's
 * block, line for line (checked by a test; the build runs this class against a server, see
 * .ci/run).
 */
public final class LazyCart {
  private LazyCart() {}

  public static void main(String[] args) {
    // docs: begin
    // spotless:off
    record Item(String sku, int quantity) {}

    Workflow<String, Integer> cart = Workflow.define("cart", String.class, Integer.class)
        .onUpdate("addItem", Item.class, (ctx, item) -> {
          Integer items = ctx.state().get("items", Integer.class);
          int now = (items == null ? 0 : items) + item.quantity();
          ctx.state().put("items", now);
          return now;
        })
        .onUpdate("checkout", String.class, (ctx, note) -> {
          ctx.signal("checked-out", note);               // ends the body's wait
          return ctx.state().get("items", Integer.class);
        })
        .run((ctx, customer) -> {
          ctx.step().waitForEvent("checked-out", String.class, Match.any(), Duration.ofDays(30));
          return ctx.state().get("items", Integer.class);
        });

    Worker worker = cart.serve(WorkerOptions.url("http://localhost:7700").token("dev"));
    WorkflowClient client = WorkflowClient.connect("http://localhost:7700", "dev");
    StartOptions ada = StartOptions.builder().idempotencyKey("cart-ada").build();
    StartedUpdate<Integer> first = client.updateWithStart(cart, "ada", ada, "addItem", new Item("tea", 2), Integer.class, null);
    StartedUpdate<Integer> then = client.updateWithStart(cart, "ada", ada, "addItem", new Item("jam", 1), Integer.class, null);
    System.out.println("ada's cart has " + then.answer() + " items; made by the first call: " + first.runCreated());
    System.out.println("checked out " + client.update("cart", then.runId(), "checkout", "ring twice", Integer.class) + " items");
    worker.close();
    // spotless:on
    // docs: end
  }
}
