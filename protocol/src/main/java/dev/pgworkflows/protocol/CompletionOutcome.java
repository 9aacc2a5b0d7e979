package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What became of one completion (or retry): {@code ok}, {@code duplicate}, {@code not_running},
 * {@code stale}; in a batch also {@code not_found}, or {@code rejected} with the status and detail
 * a single call would have had.
 *
 * @param messageId after an inline continuation, the message still held
 * @param receipt after an inline continuation, the receipt to use next
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CompletionOutcome(
    String outcome, Long messageId, String receipt, Integer status, String detail) {

  /** An outcome with nothing more to say. */
  public static CompletionOutcome of(String outcome) {
    return new CompletionOutcome(outcome, null, null, null, null);
  }

  /** A batch item that was not applied, and why. */
  public static CompletionOutcome rejected(int status, String detail) {
    return new CompletionOutcome("rejected", null, null, status, detail);
  }
}
