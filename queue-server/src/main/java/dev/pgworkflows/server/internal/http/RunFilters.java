package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The query parameters that filter a listing of runs: by start time and by input. */
final class RunFilters {
  /** Parameters of the listing that are not input filters. */
  private static final Set<String> LIST_PARAMS =
      Set.of("status", "since", "until", "cursor", "limit", "parent");

  private RunFilters() {}

  /**
   * Builds the containment document for {@code input.<path>=<value>} parameters: {@code
   * input.user.id=42} becomes {@code {"user":{"id":42}}}. A value that parses as a JSON scalar is
   * taken as one; anything else is a string. The document is a bound parameter, never SQL text.
   */
  static String inputFilter(Map<String, List<String>> params) {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    boolean any = false;
    for (Map.Entry<String, List<String>> e : params.entrySet()) {
      String key = e.getKey();
      if (LIST_PARAMS.contains(key)) {
        continue;
      }
      if (!key.startsWith("input.") || key.length() == 6) {
        throw ApiException.badRequest(key, "unknown query parameter \"" + key + "\"");
      }
      String[] path = key.substring(6).split("\\.", -1);
      if (path.length > 16) {
        throw ApiException.badRequest(key, "input paths may have at most 16 segments");
      }
      ObjectNode node = root;
      for (int i = 0; i < path.length - 1; i++) {
        if (path[i].isEmpty()) {
          throw ApiException.badRequest(key, "input path segments must not be empty");
        }
        JsonNode child = node.get(path[i]);
        node = child instanceof ObjectNode o ? o : node.putObject(path[i]);
      }
      String leaf = path[path.length - 1];
      if (leaf.isEmpty()) {
        throw ApiException.badRequest(key, "input path segments must not be empty");
      }
      node.set(leaf, scalar(e.getValue().get(0)));
      any = true;
    }
    return any ? Json.write(root) : null;
  }

  private static JsonNode scalar(String raw) {
    try {
      JsonNode n = Json.MAPPER.readTree(raw);
      if (n != null && n.isValueNode()) {
        return n;
      }
    } catch (java.io.IOException ignored) {
      // not JSON: a plain string
    }
    return JsonNodeFactory.instance.textNode(raw);
  }

  /** A date (the start of its day in UTC) or an RFC 3339 timestamp; null when absent. */
  static Instant instant(Context ctx, String param) {
    String raw = ctx.queryParam(param);
    if (raw == null) {
      return null;
    }
    try {
      if (raw.length() == 10) {
        return LocalDate.parse(raw).atStartOfDay(ZoneOffset.UTC).toInstant();
      }
      return OffsetDateTime.parse(raw).toInstant();
    } catch (DateTimeParseException e) {
      throw ApiException.badRequest(
          param, param + " must be a date (2026-05-01) or an RFC 3339 timestamp");
    }
  }
}
