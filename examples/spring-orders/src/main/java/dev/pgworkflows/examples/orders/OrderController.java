package dev.pgworkflows.examples.orders;

import dev.pgworkflows.workflows.Started;
import java.util.Map;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders} places an order; {@code GET /orders/{id}} shows it. */
@RestController
public class OrderController {
  private final Orders orders;

  public OrderController(Orders orders) {
    this.orders = orders;
  }

  @PostMapping("/orders")
  public ResponseEntity<Map<String, Object>> place(@RequestBody Order order) {
    Started run = orders.place(order);
    return ResponseEntity.status(HttpStatus.CREATED)
        .body(Map.of("orderId", order.orderId(), "runId", run.runId()));
  }

  @GetMapping("/orders/{orderId}")
  public ResponseEntity<Map<String, Object>> get(@PathVariable("orderId") String orderId) {
    return ResponseEntity.of(orders.find(orderId));
  }

  @ExceptionHandler(DuplicateKeyException.class)
  ProblemDetail taken(DuplicateKeyException e) {
    return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, "the order id is taken");
  }

  @ExceptionHandler(DataIntegrityViolationException.class)
  ProblemDetail refused(DataIntegrityViolationException e) {
    return ProblemDetail.forStatusAndDetail(
        HttpStatus.BAD_REQUEST, "quantity must be 1 to 100 and item must be given");
  }
}
