package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;
import java.util.List;

/**
 * A workflow run as the API shows it; input, output and error as JSON text.
 *
 * @param waitingFor the event a suspended run waits for
 * @param parent the run whose step started this one, when it is a child
 * @param children the runs this one started, in start order (shown when one run is read)
 * @param dueAt when the run's first task is due, for a start that asked for later
 * @param deadlineAt when the server ends the run as {@code timed_out} should it still be running
 * @param debounceKey the debounce key its starts gave
 * @param concurrencyKey the concurrency key its start gave
 * @param priority the priority its start gave (0 to 9, higher first)
 * @param paused whether an operator paused the run: its task is handed out only after a resume
 * @param forkedFrom the run and step this run was forked from, when it is a fork
 * @param continuedFrom the run this one continues, when a run continued as new into it
 * @param continuedTo the run that continues this one, when it continued as new
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Run(
    long runId,
    String workflow,
    int version,
    String status,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String input,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String output,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String error,
    String idempotencyKey,
    int retentionDays,
    Waiting waitingFor,
    Instant startedAt,
    Instant completedAt,
    Parent parent,
    List<Child> children,
    Instant dueAt,
    Instant deadlineAt,
    String debounceKey,
    String concurrencyKey,
    Integer priority,
    boolean paused,
    ForkedFrom forkedFrom,
    Long continuedFrom,
    Long continuedTo) {

  /** The run a fork was made from and the step from which the fork went its own way. */
  public record ForkedFrom(long runId, String step) {}

  /**
   * The parent of a child run and the parent's step that started it; {@code workflow} is absent
   * once retention has deleted the parent.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Parent(long runId, String workflow, String step) {}

  /** A child run as its parent's view shows it. */
  public record Child(long runId, String workflow, String status, String step) {}

  /** This run with its children. */
  public Run withChildren(List<Child> kids) {
    return new Run(
        runId,
        workflow,
        version,
        status,
        input,
        output,
        error,
        idempotencyKey,
        retentionDays,
        waitingFor,
        startedAt,
        completedAt,
        parent,
        kids,
        dueAt,
        deadlineAt,
        debounceKey,
        concurrencyKey,
        priority,
        paused,
        forkedFrom,
        continuedFrom,
        continuedTo);
  }

  /**
   * What a suspended run waits for: one event and the document its payload must contain ({@code
   * event}, {@code match}), or several ({@code arms}, each {@code {event, match, fired}}, and
   * {@code all}: whether every arm must fire or the first ends the wait).
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Waiting(
      String step,
      String event,
      @JsonRawValue @JsonDeserialize(using = RawJson.class) String match,
      @JsonRawValue @JsonDeserialize(using = RawJson.class) String arms,
      Boolean all) {

    /** A wait for one event. */
    public Waiting(String step, String event, String match) {
      this(step, event, match, null, null);
    }
  }
}
