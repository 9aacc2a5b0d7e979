package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What became of one completion (or retry): {@code ok}, {@code duplicate}, {@code not_running},
 * {@code stale}; in a batch also {@code not_found}, or {@code rejected} with the status and detail
 * a single call would have had.
 *
 * @param messageId after an inline continuation, the message still held; after a sleep or a wait,
 *     the message that will bring the run back as a new task (leased to nobody yet: no write may
 *     use it)
 * @param receipt after an inline continuation, the receipt to use next
 * @param attempt after an inline continuation, the attempt of the run's next step ({@link
 *     #ATTEMPT_AFTER_INLINE})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CompletionOutcome(
    String outcome,
    Long messageId,
    String receipt,
    Integer attempt,
    Integer status,
    String detail) {

  /**
   * The attempt of the step that follows an inline continuation: the server restarts the held
   * message's delivery count at 1 when it journals the step, so each step counts its own attempts.
   */
  public static final int ATTEMPT_AFTER_INLINE = 1;

  /** An outcome with nothing more to say. */
  public static CompletionOutcome of(String outcome) {
    return new CompletionOutcome(outcome, null, null, null, null, null);
  }

  /**
   * The outcome of a completion that went through: after an inline continuation ({@code receipt}
   * given) with the next step's attempt.
   */
  public static CompletionOutcome went(String outcome, Long messageId, String receipt) {
    return new CompletionOutcome(
        outcome, messageId, receipt, receipt == null ? null : ATTEMPT_AFTER_INLINE, null, null);
  }

  /** A batch item that was not applied, and why. */
  public static CompletionOutcome rejected(int status, String detail) {
    return new CompletionOutcome("rejected", null, null, null, status, detail);
  }
}
