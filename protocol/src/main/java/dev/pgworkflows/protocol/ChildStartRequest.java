package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * A parent run's step starting its child: the child's workflow, input and version, what a cancel of
 * the parent does to it ({@code cancel}, the default, or {@code abandon}), and its flow control: a
 * concurrency key, a priority and a deadline in milliseconds after its start (each may be null).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChildStartRequest(
    String step,
    String workflow,
    JsonNode input,
    Integer version,
    String onParentCancel,
    Integer retentionDays,
    String concurrencyKey,
    Integer priority,
    Long deadlineMs) {

  /** A child start without flow control. */
  public ChildStartRequest(
      String step,
      String workflow,
      JsonNode input,
      Integer version,
      String onParentCancel,
      Integer retentionDays) {
    this(step, workflow, input, version, onParentCancel, retentionDays, null, null, null);
  }
}
