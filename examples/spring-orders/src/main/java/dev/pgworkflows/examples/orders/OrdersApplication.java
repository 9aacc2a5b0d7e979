package dev.pgworkflows.examples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An order service: {@code POST /orders} writes the order to its own table and starts the order's
 * workflow in the same transaction, so there is never an order without its run nor a run without
 * its order. The workflow ({@link OrderWorkflow}) runs on this application's own worker.
 */
@SpringBootApplication
public class OrdersApplication {
  public static void main(String[] args) {
    SpringApplication.run(OrdersApplication.class, args);
  }
}
