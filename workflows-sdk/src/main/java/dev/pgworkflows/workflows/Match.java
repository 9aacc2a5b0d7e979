package dev.pgworkflows.workflows;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which signal payloads a {@code waitForEvent} accepts: those that contain this document (JSON
 * containment, {@code payload @> match}). {@link #any()} accepts every payload.
 */
public record Match(Map<String, Object> document) {
  public Match {
    document = Map.copyOf(document);
  }

  public static Match any() {
    return new Match(Map.of());
  }

  public static Match of(String key, Object value) {
    return new Match(Map.of(key, value));
  }

  public static Match of(String k1, Object v1, String k2, Object v2) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(k1, v1);
    m.put(k2, v2);
    return new Match(m);
  }

  public static Match of(Map<String, Object> document) {
    return new Match(document);
  }
}
