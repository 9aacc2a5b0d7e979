package dev.pgworkflows.examples.orders;

import dev.pgworkflows.workflows.Workflow;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The order's workflow, a bean: the starter serves it on this application's worker. Each step moves
 * the order row on; a step that runs twice (a crash before its result was journaled) sets the same
 * status again.
 */
@Configuration(proxyBeanMethods = false)
public class OrderWorkflow {
  public static final String NAME = "process-order";

  @Bean
  public Workflow<Order, String> processOrder(JdbcClient db) {
    return Workflow.define(NAME, Order.class, String.class)
        .run(
            (ctx, order) -> {
              ctx.step().run("reserve-stock", () -> setStatus(db, order, "reserved"));
              ctx.step().run("ship", () -> setStatus(db, order, "shipped"));
              return "shipped " + order.quantity() + " x " + order.item();
            });
  }

  private static int setStatus(JdbcClient db, Order order, String status) {
    return db.sql("UPDATE shop_order SET status = ? WHERE order_id = ?")
        .params(status, order.orderId())
        .update();
  }
}
