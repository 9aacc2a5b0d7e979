package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.Locale;

/** How queues and their messages read for people. */
final class QueueShows {
  private QueueShows() {}

  static void queues(Iterable<JsonNode> queues, PrintWriter out) {
    Table table =
        new Table(
            "QUEUE",
            "FIFO",
            "VISIBILITY",
            "MAX RECEIVES",
            "DEPTH",
            "VISIBLE",
            "IN FLIGHT",
            "DELAYED",
            "DEAD",
            "OLDEST (S)");
    for (JsonNode q : queues) {
      JsonNode m = q.path("metrics");
      table.row(
          q.path("name").asText(),
          q.path("fifo").asBoolean() ? "yes" : "no",
          q.path("visibilityTimeoutSeconds").asInt() + "s",
          Cells.cell(q.path("maxReceives")),
          m.path("depth").asLong(),
          m.path("visible").asLong(),
          m.path("inFlight").asLong(),
          m.path("delayed").asLong(),
          m.path("deadLettered").asLong(),
          String.format(Locale.ROOT, "%.1f", m.path("oldestAgeSeconds").asDouble()));
    }
    table.print(out);
  }

  static void messages(JsonNode messages, PrintWriter out) {
    Table table = new Table("MESSAGE", "GROUP", "READS", "ENQUEUED", "VISIBLE AT", "BODY");
    for (JsonNode m : messages) {
      table.row(
          m.path("id").asLong(),
          Cells.cell(m.path("groupId")),
          Cells.cell(m.path("readCount")),
          Cells.cell(m.path("enqueuedAt")),
          Cells.cell(m.path("visibleAt")),
          Cells.cell(m.path("body")));
    }
    table.print(out);
  }

  static void deadLetters(JsonNode answer, PrintWriter out) {
    Table table = new Table("DEAD ID", "MESSAGE", "GROUP", "READS", "DEAD AT", "BODY");
    for (JsonNode d : answer.path("deadLetters")) {
      table.row(
          d.path("deadId").asLong(),
          d.path("messageId").asLong(),
          Cells.cell(d.path("groupId")),
          d.path("readCount").asInt(),
          Cells.cell(d.path("deadAt")),
          Cells.cell(d.path("body")));
    }
    table.print(out);
    if (answer.hasNonNull("next")) {
      out.println("more: --after " + answer.get("next").asText());
    }
  }
}
