package dev.pgworkflows.engine.internal.checks;

import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.Labels;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.WorkerRouting;
import java.util.Map;
import java.util.Set;

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

  /**
   * A workflow's concurrency settings: a limit of 1 to 100000 (null removes the limit, and then
   * nothing else may be given), a known strategy, a limitFrom of 1 to 255 characters starting with
   * {@code $} (its syntax is the database's to check), limits only with limitFrom, at most 100,
   * each 1 to 100000, a totalLimit of 1 to 100000, and weights only with it, at most 1000, each 1
   * to 1000.
   */
  public static ConcurrencyLimit concurrency(ConcurrencyLimit req) {
    if (req.limit() == null) {
      if (req.strategy() != null && !req.strategy().equals("queue")
          || req.limitFrom() != null
          || req.limits() != null) {
        throw ApiException.badRequest(
            "limit",
            "limit is required with a strategy, limitFrom or limits (null removes the limit)");
      }
      return req;
    }
    WorkerChecks.range("limit", req.limit(), 1, 1, 100_000);
    if (req.strategy() != null && !STRATEGIES.contains(req.strategy())) {
      throw ApiException.badRequest(
          "strategy",
          "strategy must be one of queue, cancel_in_progress, cancel_newest and skip, got \""
              + req.strategy()
              + "\"");
    }
    if (req.limitFrom() != null
        && (!req.limitFrom().startsWith("$") || req.limitFrom().length() > 255)) {
      throw ApiException.badRequest(
          "limitFrom", "limitFrom must be a JSON path of at most 255 characters, such as $.plan");
    }
    if (req.limits() != null) {
      if (req.limitFrom() == null) {
        throw ApiException.badRequest(
            "limits", "limits goes with limitFrom: it maps the value limitFrom reads to a limit");
      }
      if (req.limits().size() > 100) {
        throw ApiException.badRequest("limits", "limits holds at most 100 values");
      }
      req.limits()
          .forEach(
              (value, n) -> {
                if (n == null || n < 1 || n > 100_000) {
                  throw ApiException.badRequest(
                      "limits." + value,
                      "limits." + value + " must be a whole number from 1 to 100000, got " + n);
                }
              });
    }
    if (req.totalLimit() != null) {
      WorkerChecks.range("totalLimit", req.totalLimit(), 1, 1, 100_000);
    }
    if (req.weights() != null) {
      if (req.totalLimit() == null) {
        throw ApiException.badRequest(
            "weights", "weights goes with totalLimit: they share its slots between keys");
      }
      if (req.weights().size() > 1000) {
        throw ApiException.badRequest("weights", "weights holds at most 1000 keys");
      }
      req.weights()
          .forEach(
              (key, w) -> {
                if (w == null || w < 1 || w > 1000) {
                  throw ApiException.badRequest(
                      "weights." + key,
                      "weights." + key + " must be a whole number from 1 to 1000, got " + w);
                }
              });
    }
    return req;
  }

  /**
   * A throttle: a limit of 1 to 1000000 starts (null removes the throttle, and then nothing else
   * may be given) per periodMs of 1 ms to a day, a burst of 1 to 1000000.
   */
  public static ThrottleSettings throttle(ThrottleSettings req) {
    if (req.limit() == null) {
      if (req.periodMs() != null || req.burst() != null || Boolean.TRUE.equals(req.perKey())) {
        throw ApiException.badRequest(
            "limit",
            "limit is required with periodMs, burst or perKey (null removes the throttle)");
      }
      return req;
    }
    WorkerChecks.range("limit", req.limit(), 1, 1, 1_000_000);
    if (req.periodMs() == null) {
      throw ApiException.badRequest("periodMs", "periodMs is required with limit");
    }
    if (req.periodMs() < 1 || req.periodMs() > 86_400_000) {
      throw ApiException.badRequest("periodMs", "periodMs must be between 1 and 86400000");
    }
    if (req.burst() != null) {
      WorkerChecks.range("burst", req.burst(), 1, 1, 1_000_000);
    }
    return req;
  }

  /**
   * Which workers take a workflow's tasks: {@code require} and {@code prefer} are null or 1 to 20
   * labels each ({@link Labels}); answered sorted.
   */
  public static WorkerRouting routing(WorkerRouting req) {
    return new WorkerRouting(
        req.workflow(),
        req.require() == null ? null : labels("require", req.require(), 1),
        req.prefer() == null ? null : labels("prefer", req.prefer(), 1),
        Boolean.TRUE.equals(req.sticky()));
  }

  /** {@code labels} checked as {@link Labels#check}, a 400 naming the field otherwise. */
  public static Map<String, String> labels(String field, Map<String, String> labels, int min) {
    try {
      return Labels.check(field, labels, min);
    } catch (Labels.Invalid e) {
      throw ApiException.badRequest(e.field(), e.getMessage());
    }
  }

  private static final Set<String> STRATEGIES =
      Set.of("queue", "cancel_in_progress", "cancel_newest", "skip");
}
