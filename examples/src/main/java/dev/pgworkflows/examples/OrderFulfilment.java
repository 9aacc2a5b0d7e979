package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Arm;
import dev.pgworkflows.workflows.Branch;
import dev.pgworkflows.workflows.ChildRun;
import dev.pgworkflows.workflows.Fired;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Composition in one order: its items are reserved in parallel, shipping is a child workflow, and
 * the order waits for a payment signal or a timeout, whichever comes first. The payment of the
 * first order is sent before the order reaches its wait: the run's inbox keeps it.
 *
 * <p>Run: {@code java -cp examples/target/pgworkflows-demo.jar
 * dev.pgworkflows.examples.OrderFulfilment}
 */
public final class OrderFulfilment {
  public record Order(String id, List<String> items) {}

  public record Payment(String order, long cents) {}

  public record Outcome(String orderId, String status, List<String> reservations, String parcel) {}

  private OrderFulfilment() {}

  public static Workflow<Order, String> shipping() {
    return Workflow.define("shipping", Order.class, String.class)
        .run(
            (ctx, order) ->
                ctx.step()
                    .run(
                        "label",
                        String.class,
                        () -> "parcel-" + order.id() + "-" + order.items().size()));
  }

  public static Workflow<Order, Outcome> workflow(Duration paymentTimeout) {
    Workflow<Order, String> shipping = shipping();
    return Workflow.define("order-fulfilment", Order.class, Outcome.class)
        .run(
            (ctx, order) -> {
              List<Branch<String>> reserve = new ArrayList<>();
              for (String item : order.items()) {
                reserve.add(Branch.of("reserve-" + item, String.class, () -> "res-" + item));
              }
              List<String> reservations = ctx.step().parallel(reserve);
              Arm paid = Arm.event("payment", Match.of("order", order.id()));
              Fired payment = ctx.step().waitForAny("payment", paymentTimeout, paid);
              if (payment.timedOut()) {
                ctx.step()
                    .run("release", () -> System.out.println("  [stock] release " + reservations));
                return new Outcome(order.id(), "unpaid", reservations, null);
              }
              ChildRun<String> parcel = ctx.step().startChild("ship", shipping, order);
              return new Outcome(order.id(), "shipped", reservations, parcel.result());
            });
  }

  public static void main(String[] args) throws Exception {
    try (Sandbox sandbox = Sandbox.open()) {
      Workflow<Order, Outcome> fulfil = workflow(Duration.ofSeconds(3));
      var workers =
          List.of(fulfil.serve(sandbox.workerOptions()), shipping().serve(sandbox.workerOptions()));
      try {
        var client = sandbox.client();
        long paidRun =
            client.start(fulfil, new Order("o-1", List.of("book", "lamp", "mug"))).runId();
        var sent = client.signal("order-fulfilment", paidRun, "payment", new Payment("o-1", 4200));
        System.out.println("payment for o-1 sent: " + sent.outcome());
        long unpaidRun = client.start(fulfil, new Order("o-2", List.of("chair"))).runId();
        for (long run : new long[] {paidRun, unpaidRun}) {
          Outcome out =
              client
                  .runs()
                  .awaitResult("order-fulfilment", run, Outcome.class, Duration.ofSeconds(30));
          System.out.println(
              "order "
                  + out.orderId()
                  + ": "
                  + out.status()
                  + " "
                  + out.reservations()
                  + (out.parcel() == null ? "" : " " + out.parcel()));
          System.out.println(
              "  journal: "
                  + client.runs().steps("order-fulfilment", run).stream()
                      .map(s -> s.name())
                      .toList());
        }
      } finally {
        for (var w : workers) {
          w.close();
        }
      }
    }
  }
}
