package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/**
 * A run as the server reports it; input, output and error are raw JSON. {@code parent} is set for a
 * child run; {@code children} is filled when one run is read ({@link Runs#get}) and empty in list
 * pages. {@code dueAt} is when the first task of a delayed or debounced start is due and {@code
 * deadlineAt} when the server ends the run as {@link RunStatus#TIMED_OUT}; both null when the start
 * gave none. {@code concurrencyKey} and {@code priority} are those its start gave, if any. {@code
 * paused} says whether an operator paused the run ({@link Runs#pause}); a forked run ({@link
 * Runs#fork}) names its origin in {@code forkedFrom}, null otherwise. A run that continued as new
 * ({@link WorkflowContext#continueAsNew}) names its successor in {@code continuedTo}, and the
 * successor it in {@code continuedFrom}; both null outside a chain.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RunInfo(
    long runId,
    String workflow,
    int version,
    RunStatus status,
    JsonNode input,
    JsonNode output,
    JsonNode error,
    String idempotencyKey,
    int retentionDays,
    Waiting waitingFor,
    Instant startedAt,
    Instant completedAt,
    Parent parent,
    List<Child> children,
    Instant dueAt,
    Instant deadlineAt,
    String concurrencyKey,
    Integer priority,
    boolean paused,
    ForkedFrom forkedFrom,
    Long continuedFrom,
    Long continuedTo) {

  /** The run a fork was made from, and the step from which the fork went its own way. */
  public record ForkedFrom(long runId, String step) {}

  /** The run whose step started this one. */
  public record Parent(long runId, String workflow, String step) {}

  /** A run this one started, and the step that started it. */
  public record Child(long runId, String workflow, RunStatus status, String step) {}

  /** The event a suspended run waits for, if any. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Waiting(String step, String event, JsonNode match) {}
}
