package dev.pgworkflows.workflows;

import java.util.Map;

/**
 * A run's search attributes, set from its body ({@link WorkflowContext#attributes()}): each call is
 * made once and journaled, so a replay passes it without asking the server again. Values are of the
 * attribute's type ({@link AttributeType}): a string, a list of strings, a number, a boolean or an
 * {@link java.time.Instant}; null removes the attribute. An attribute that is not defined, or a
 * value of another type, throws {@link ApiException} (400) in the body and sets nothing.
 */
public interface Attributes {
  /** Sets these attributes; those not named stay as they are. */
  void set(Map<String, ?> values);

  /** Sets one attribute. */
  default void set(String name, Object value) {
    java.util.HashMap<String, Object> one = new java.util.HashMap<>(1);
    one.put(name, value);
    set(one);
  }
}
