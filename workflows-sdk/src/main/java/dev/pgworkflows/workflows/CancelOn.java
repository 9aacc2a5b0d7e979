package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.CancelOnRule;
import dev.pgworkflows.protocol.Names;
import java.util.List;
import java.util.Map;

/**
 * An event that cancels runs of a workflow ({@link Workflow.Builder#cancelOn}): a signal sent to a
 * run, or a message published on a topic.
 *
 * <pre>{@code
 * Workflow.define("order", Order.class, Receipt.class)
 *     .cancelOn(CancelOn.signal("cancel-order"))                          // that signal, to a run
 *     .cancelOn(CancelOn.topic("orders.*.cancelled").sameInput("orderId")) // a message about its order
 *     .run(...);
 * }</pre>
 *
 * A signal rule cancels the run the signal is sent to; a topic rule cancels every running run of
 * the workflow the message concerns: with {@link #sameInput}, the runs whose input has those fields
 * as the message has them; without, all of them. {@link #match} narrows either to payloads that
 * contain a document, as a wait's match does. The cancel is {@link Runs#cancel}'s: children started
 * to be cancelled with their parent go first, and a step in flight learns of it on its next write.
 */
public final class CancelOn {
  private final String signal;
  private final String topic;
  private final Match match;
  private final List<String> inputFields;

  private CancelOn(String signal, String topic, Match match, List<String> inputFields) {
    this.signal = signal;
    this.topic = topic;
    this.match = match;
    this.inputFields = inputFields;
  }

  /** The signal {@code name}, sent to a run of the workflow, cancels that run. */
  public static CancelOn signal(String name) {
    if (!Names.isEventName(name) || name.startsWith("__")) {
      throw new IllegalArgumentException(
          "signal must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\", not"
              + " starting with \"__\", got "
              + name);
    }
    return new CancelOn(name, null, Match.any(), List.of());
  }

  /**
   * A message published on a topic {@code pattern} fits ("*" one segment, a final "#" the rest)
   * cancels the running runs of the workflow it concerns.
   */
  public static CancelOn topic(String pattern) {
    if (pattern == null || pattern.isEmpty() || pattern.length() > 255) {
      throw new IllegalArgumentException("topic must be a topic pattern of 1 to 255 characters");
    }
    return new CancelOn(null, pattern, Match.any(), List.of());
  }

  /** Only an event whose payload contains {@code match}'s document counts. */
  public CancelOn match(Match match) {
    if (match == null) {
      throw new IllegalArgumentException("match must not be null (Match.any() takes any payload)");
    }
    return new CancelOn(signal, topic, match, inputFields);
  }

  /**
   * Only the runs whose input has each of these top-level {@code fields} as the event's payload has
   * it (1 to 10 of them); a payload without one of them cancels nothing.
   */
  public CancelOn sameInput(String... fields) {
    if (fields == null || fields.length < 1 || fields.length > 10) {
      throw new IllegalArgumentException("sameInput takes 1 to 10 field names");
    }
    for (String f : fields) {
      if (f == null || f.isEmpty() || f.length() > 128) {
        throw new IllegalArgumentException("a field name must be 1 to 128 characters");
      }
    }
    return new CancelOn(signal, topic, match, List.of(fields));
  }

  /** The rule as the server takes it. */
  CancelOnRule rule() {
    Map<String, Object> doc = match.document();
    return new CancelOnRule(
        signal,
        topic,
        doc == null || doc.isEmpty() ? null : doc,
        inputFields.isEmpty() ? null : inputFields);
  }

  @Override
  public String toString() {
    return (signal != null ? "signal " + signal : "topic " + topic)
        + (match.document() == null || match.document().isEmpty()
            ? ""
            : " matching " + match.document())
        + (inputFields.isEmpty() ? "" : " on the same " + inputFields);
  }
}
