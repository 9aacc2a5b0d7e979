package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/**
 * A signal a run was sent: buffered while {@code deliveredAt} is null, else taken by the wait step
 * {@code deliveredTo}.
 */
public record SignalInfo(
    long signalId,
    String event,
    JsonNode payload,
    String idempotencyKey,
    Instant sentAt,
    Instant deliveredAt,
    String deliveredTo) {

  public boolean buffered() {
    return deliveredAt == null;
  }
}
