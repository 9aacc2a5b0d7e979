package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.StepFailedException;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;

/**
 * An order saga: charge, reserve, ship; when a later step fails for good, the earlier ones are
 * compensated (release the stock, refund the charge) and the saga reports what happened.
 *
 * <p>Run: {@code java -cp examples/target/pgworkflows-demo.jar dev.pgworkflows.examples.OrderSaga}
 */
public final class OrderSaga {
  public record Order(String id, long cents, int quantity, boolean shippable) {}

  public record Outcome(String orderId, String status, String detail) {}

  private OrderSaga() {}

  public static Workflow<Order, Outcome> workflow() {
    Retry quick = Retry.exponential(3, Duration.ofMillis(200));
    return Workflow.define("order-saga", Order.class, Outcome.class)
        .run(
            (ctx, order) -> {
              String charge =
                  ctx.step().run("charge", String.class, () -> "ch_" + order.id(), quick);
              String reservation;
              try {
                reservation =
                    ctx.step()
                        .run(
                            "reserve",
                            String.class,
                            () -> {
                              if (order.quantity() > 10) {
                                throw new IllegalStateException("only 10 in stock");
                              }
                              return "res_" + order.id();
                            },
                            quick);
              } catch (StepFailedException e) {
                ctx.step().run("refund", () -> System.out.println("  [pay] refund " + charge));
                return new Outcome(order.id(), "compensated", e.errorMessage());
              }
              try {
                ctx.step()
                    .run(
                        "ship",
                        String.class,
                        () -> {
                          if (!order.shippable()) {
                            throw new IllegalStateException("carrier refused the parcel");
                          }
                          return "trk_" + order.id();
                        },
                        quick);
              } catch (StepFailedException e) {
                ctx.step()
                    .run("release", () -> System.out.println("  [stock] release " + reservation));
                ctx.step().run("refund", () -> System.out.println("  [pay] refund " + charge));
                return new Outcome(order.id(), "compensated", e.errorMessage());
              }
              return new Outcome(order.id(), "shipped", charge + "/" + reservation);
            });
  }

  public static void main(String[] args) throws Exception {
    try (Sandbox sandbox = Sandbox.open()) {
      Workflow<Order, Outcome> saga = workflow();
      var worker = saga.serve(sandbox.workerOptions());
      try {
        var client = sandbox.client();
        for (Order o :
            new Order[] {
              new Order("o-1", 1999, 1, true),
              new Order("o-2", 4999, 50, true),
              new Order("o-3", 2500, 2, false)
            }) {
          long run = client.start(saga, o).runId();
          Outcome out =
              client.runs().awaitResult("order-saga", run, Outcome.class, Duration.ofSeconds(30));
          System.out.println("order " + o.id() + ": " + out.status() + " (" + out.detail() + ")");
          System.out.println(
              "  journal: "
                  + client.runs().steps("order-saga", run).stream()
                      .map(s -> s.name() + (s.error() != null && !s.error().isNull() ? "!" : ""))
                      .toList());
        }
      } finally {
        worker.close();
      }
    }
  }
}
