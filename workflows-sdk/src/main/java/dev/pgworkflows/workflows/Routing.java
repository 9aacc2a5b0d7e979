package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.Labels;
import dev.pgworkflows.protocol.WorkerRouting;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Which workers take a workflow's runs, by the labels they declare ({@link WorkerOptions#labels}):
 * only workers whose labels hold every label {@link #require required}; among them, those whose
 * labels hold the {@link #prefer preferred} ones while the registry lists such a worker (any of
 * them when none is); and, when {@link #sticky}, each run's later tasks go to the worker that took
 * its last task, while the registry lists that worker, then to any. Immutable: each method answers
 * a new value.
 *
 * <pre>{@code
 * Routing.workers().require("gpu", "true").prefer("region", "eu").sticky()
 * }</pre>
 */
public final class Routing {
  private final Map<String, String> require;
  private final Map<String, String> prefer;
  private final boolean sticky;

  private Routing(Map<String, String> require, Map<String, String> prefer, boolean sticky) {
    this.require = require;
    this.prefer = prefer;
    this.sticky = sticky;
  }

  /** Any worker: add what the runs need with the other methods. */
  public static Routing workers() {
    return new Routing(Map.of(), Map.of(), false);
  }

  /**
   * Only workers with label {@code name} of value {@code value}, and the labels required so far.
   */
  public Routing require(String name, String value) {
    return new Routing(with("require", require, name, value), prefer, sticky);
  }

  /** Workers with label {@code name} of {@code value} first, while the registry lists one. */
  public Routing prefer(String name, String value) {
    return new Routing(require, with("prefer", prefer, name, value), sticky);
  }

  /** Each run's later tasks go to the worker that took its last task, while that worker lives. */
  public Routing sticky() {
    return new Routing(require, prefer, true);
  }

  /** The labels a worker must have (empty: none). */
  public Map<String, String> required() {
    return require;
  }

  /** The labels a worker is preferred for (empty: none). */
  public Map<String, String> preferred() {
    return prefer;
  }

  public boolean isSticky() {
    return sticky;
  }

  private static Map<String, String> with(
      String field, Map<String, String> labels, String name, String value) {
    Map<String, String> out = new TreeMap<>(labels);
    out.put(name, value);
    try {
      return Map.copyOf(Labels.check(field, out, 1));
    } catch (Labels.Invalid e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** These settings as {@code PUT /v1/workflows/{name}/routing} takes them. */
  WorkerRouting wire() {
    return new WorkerRouting(
        null, require.isEmpty() ? null : require, prefer.isEmpty() ? null : prefer, sticky);
  }

  /** The routing a server answered with; null when it routes nothing. */
  static Routing of(WorkerRouting r) {
    if (r == null
        || !(r.require() != null || r.prefer() != null || Boolean.TRUE.equals(r.sticky()))) {
      return null;
    }
    return new Routing(
        r.require() == null ? Map.of() : Map.copyOf(r.require()),
        r.prefer() == null ? Map.of() : Map.copyOf(r.prefer()),
        Boolean.TRUE.equals(r.sticky()));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Routing r
        && require.equals(r.require)
        && prefer.equals(r.prefer)
        && sticky == r.sticky;
  }

  @Override
  public int hashCode() {
    return Objects.hash(require, prefer, sticky);
  }

  @Override
  public String toString() {
    return "Routing[require="
        + Labels.format(require)
        + ", prefer="
        + Labels.format(prefer)
        + ", sticky="
        + sticky
        + "]";
  }
}
