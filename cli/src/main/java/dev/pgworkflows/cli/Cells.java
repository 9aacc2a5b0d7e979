package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.regex.Pattern;

/** How a JSON value reads in a table cell or on a {@code name value} line. */
final class Cells {
  private static final int WIDE = 60;
  private static final Pattern TIME =
      Pattern.compile("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)$");

  private Cells() {}

  /**
   * A value in full: text as it is, but times in UTC to the second; anything else as one line of
   * JSON.
   */
  static String full(JsonNode value) {
    if (value == null || value.isMissingNode() || value.isNull()) {
      return "-";
    }
    if (value.isTextual()) {
      String text = value.asText();
      return TIME.matcher(text).matches() ? utcSeconds(text) : text;
    }
    if (value.isValueNode()) {
      return value.asText();
    }
    return Json.compact(value);
  }

  private static String utcSeconds(String time) {
    try {
      return OffsetDateTime.parse(time).toInstant().truncatedTo(ChronoUnit.SECONDS).toString();
    } catch (DateTimeParseException e) {
      return time;
    }
  }

  /** A value cut to fit a table column. */
  static String cell(JsonNode value) {
    String text = full(value);
    return text.length() <= WIDE ? text : text.substring(0, WIDE - 3) + "...";
  }

  /** An object's fields, one {@code name value} line each, names aligned. */
  static void fields(JsonNode object, PrintWriter out) {
    int width = 0;
    for (Map.Entry<String, JsonNode> f : object.properties()) {
      width = Math.max(width, f.getKey().length());
    }
    for (Map.Entry<String, JsonNode> f : object.properties()) {
      out.println(f.getKey() + " ".repeat(width - f.getKey().length() + 2) + full(f.getValue()));
    }
    out.flush();
  }

  /** The line a page of a list ends with when more may follow: how to ask for the next page. */
  static void more(JsonNode answer, PrintWriter out) {
    if (answer.hasNonNull("nextCursor")) {
      out.println("more: --after " + answer.get("nextCursor").asText());
    }
  }
}
