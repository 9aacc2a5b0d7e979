package dev.pgworkflows.engine.internal.checks;

/**
 * Checks the flow-control fields of starts and limits before the database does (whose functions in
 * sql/functions/flow_control.sql check them again and name the same fields).
 */
public final class FlowChecks {
  public static final int MAX_PRIORITY = 9;

  private FlowChecks() {}

  /** A concurrency (or rate-limit) key: 1 to 255 characters; null passes. */
  public static String key(String field, String key) {
    if (key != null && (key.isEmpty() || key.length() > 255)) {
      throw ApiException.badRequest(field, field + " must be 1 to 255 characters");
    }
    return key;
  }

  /** A start's priority: 0 to 9; null passes. */
  public static Integer priority(Integer priority) {
    if (priority != null) {
      WorkerChecks.range("priority", priority, 0, 0, MAX_PRIORITY);
    }
    return priority;
  }
}
