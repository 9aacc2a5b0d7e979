package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.FlowChecks;
import dev.pgworkflows.engine.internal.checks.StartTimings;

/**
 * Checks the start fields a send to a workflow's queue carries in its headers ({@code
 * concurrencyKey}, {@code priority}, {@code delayMs} or {@code startAt}, {@code deadlineMs} or
 * {@code deadlineAt}) before the database does ({@code queue.workflow_start_headers} reads them,
 * and {@code workflow_start} checks them again); a 400 names the header as {@code headers.<name>}.
 */
final class StartHeaders {
  private StartHeaders() {}

  /** Checks the headers of a send to {@code queue}, named {@code at} in errors; others pass. */
  static void check(String queue, ObjectNode headers, String at) {
    if (headers == null || !queue.startsWith("__wf_")) {
      return;
    }
    JsonNode key = headers.get("concurrencyKey");
    if (key != null && !key.isNull()) {
      if (!key.isTextual() || key.asText().isEmpty() || key.asText().length() > 255) {
        throw ApiException.badRequest(
            at + ".concurrencyKey", "concurrencyKey must be 1 to 255 characters");
      }
    }
    whole(headers, at, "priority", 0, FlowChecks.MAX_PRIORITY);
    whole(headers, at, "delayMs", 0, StartTimings.MAX_MS);
    whole(headers, at, "deadlineMs", 1, StartTimings.MAX_MS);
    text(headers, at, "startAt");
    text(headers, at, "deadlineAt");
    if (present(headers, "startAt") && present(headers, "delayMs")) {
      throw ApiException.badRequest(at + ".delayMs", "delayMs: give startAt or delayMs, not both");
    }
    if (present(headers, "deadlineAt") && present(headers, "deadlineMs")) {
      throw ApiException.badRequest(
          at + ".deadlineMs", "deadlineMs: give deadlineAt or deadlineMs, not both");
    }
  }

  private static boolean present(ObjectNode headers, String name) {
    return headers.has(name) && !headers.get(name).isNull();
  }

  /** A whole number, or a string of its digits, within [lo, hi]. */
  private static void whole(ObjectNode headers, String at, String name, long lo, long hi) {
    if (!present(headers, name)) {
      return;
    }
    JsonNode v = headers.get(name);
    Long n = null;
    if (v.isIntegralNumber() && v.canConvertToLong()) {
      n = v.asLong();
    } else if (v.isTextual() && v.asText().matches("-?[0-9]{1,18}")) {
      n = Long.parseLong(v.asText());
    }
    if (n == null || n < lo || n > hi) {
      throw ApiException.badRequest(
          at + "." + name, name + " must be a whole number between " + lo + " and " + hi);
    }
  }

  private static void text(ObjectNode headers, String at, String name) {
    if (present(headers, name) && !headers.get(name).isTextual()) {
      throw ApiException.badRequest(
          at + "." + name, name + " must be an instant such as 2030-01-01T00:00:00Z");
    }
  }
}
