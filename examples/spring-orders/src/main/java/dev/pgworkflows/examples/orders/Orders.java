package dev.pgworkflows.examples.orders;

import dev.pgworkflows.spring.WorkflowStarter;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Workflow;
import java.util.Map;
import java.util.Optional;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The orders table and the runs of their workflow, written together. */
@Service
public class Orders {
  private final JdbcClient db;
  private final WorkflowStarter workflows;
  private final Workflow<Order, String> processOrder;

  public Orders(JdbcClient db, WorkflowStarter workflows, Workflow<Order, String> processOrder) {
    this.db = db;
    this.workflows = workflows;
    this.processOrder = processOrder;
  }

  /**
   * Starts the order's run and writes its row, in one transaction: when the row cannot be written
   * (an order id taken, a quantity the table refuses), the exception rolls back the start too.
   */
  @Transactional
  public Started place(Order order) {
    Started run =
        workflows.startInTransaction(
            processOrder,
            order,
            StartOptions.builder().idempotencyKey("order-" + order.orderId()).build());
    db.sql(
            "INSERT INTO shop_order (order_id, item, quantity, status, run_id)"
                + " VALUES (?, ?, ?, 'placed', ?)")
        .params(order.orderId(), order.item(), order.quantity(), run.runId())
        .update();
    return run;
  }

  /** The order's row: its status and its run. */
  public Optional<Map<String, Object>> find(String orderId) {
    return db
        .sql("SELECT order_id, item, quantity, status, run_id FROM shop_order WHERE order_id = ?")
        .param(orderId)
        .query()
        .listOfRows()
        .stream()
        .findFirst();
  }
}
