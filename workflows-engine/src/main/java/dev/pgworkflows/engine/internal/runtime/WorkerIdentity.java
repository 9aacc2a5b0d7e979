package dev.pgworkflows.engine.internal.runtime;

import java.util.Map;

/**
 * Who a worker says it is: its id, its host, its slots (null when it did not say) and its labels
 * (checked, by name; empty when it declared none). A worker that says nothing is known by its
 * address.
 */
public record WorkerIdentity(String id, String host, Integer slots, Map<String, String> labels) {

  public WorkerIdentity {
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** A worker without labels. */
  public WorkerIdentity(String id, String host, Integer slots) {
    this(id, host, slots, Map.of());
  }
}
