package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.replay.ChildEnds;
import java.util.List;
import java.util.Optional;

/**
 * What ended a wait on several arms: which arms fired, with their payloads, and whether the timeout
 * came first. The same on every replay.
 */
public final class Fired {
  private final List<Arm> arms;
  private final List<JsonNode> payloads;
  private final boolean timedOut;

  /**
   * @param payloads one per arm, in the arms' order: the payload of the signal that fired it, or
   *     null where the arm did not fire
   */
  public Fired(List<Arm> arms, List<JsonNode> payloads, boolean timedOut) {
    this.arms = List.copyOf(arms);
    this.payloads = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(payloads));
    this.timedOut = timedOut;
  }

  /** Whether the wait ended by its timeout (what fired before it is still here). */
  public boolean timedOut() {
    return timedOut;
  }

  /** Whether arm {@code index} (in the order given to the wait) fired. */
  public boolean fired(int index) {
    return payloads.get(index) != null;
  }

  /** Whether {@code arm} fired. */
  public boolean fired(Arm arm) {
    return fired(indexOf(arm));
  }

  /** The payload that fired arm {@code index}, as {@code type}; empty when it did not fire. */
  public <T> Optional<T> payload(int index, Class<T> type) {
    JsonNode p = payloads.get(index);
    if (p == null) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(Transport.JSON.treeToValue(p, type));
    } catch (java.io.IOException e) {
      throw new IllegalStateException("payload does not fit " + type.getName(), e);
    }
  }

  public <T> Optional<T> payload(Arm arm, Class<T> type) {
    return payload(indexOf(arm), type);
  }

  /**
   * The result of a child whose end fired: its output as {@code type}, or {@link
   * ChildFailedException} when it failed or was cancelled; empty when it did not fire.
   */
  public <O> Optional<O> result(ChildRun<O> child, Class<O> type) {
    JsonNode end = payloads.get(indexOf(child.ended()));
    if (end == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(ChildEnds.output(end, type));
  }

  private int indexOf(Arm arm) {
    int i = arms.indexOf(arm);
    if (i < 0) {
      throw new IllegalArgumentException("not an arm of this wait: " + arm.event());
    }
    return i;
  }
}
