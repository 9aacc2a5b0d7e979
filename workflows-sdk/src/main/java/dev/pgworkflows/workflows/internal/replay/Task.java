package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A leased task as the worker reads it: the protocol's {@link dev.pgworkflows.protocol.Task}, with
 * the input and the journal as trees rather than JSON text, read in one pass over the answer
 * ({@link #of}). The protocol record keeps them as text for the server, which passes them through
 * unparsed; binding it here would parse each twice on the worker's hottest path.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Task(
    long runId,
    long messageId,
    String receipt,
    int attempt,
    int version,
    String reason,
    JsonNode input,
    List<Entry> journal,
    Instant startedAt,
    String traceContext,
    JsonNode stepOptions) {

  /** A task without an operator's step options. */
  public Task(
      long runId,
      long messageId,
      String receipt,
      int attempt,
      int version,
      String reason,
      JsonNode input,
      List<Entry> journal,
      Instant startedAt,
      String traceContext) {
    this(
        runId,
        messageId,
        receipt,
        attempt,
        version,
        reason,
        input,
        journal,
        startedAt,
        traceContext,
        null);
  }

  /**
   * One journal row.
   *
   * @param state the run state changes journaled with the row; null when it made none
   */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Entry(
      String name, String kind, JsonNode output, JsonNode error, boolean timedOut, JsonNode state) {

    /** A row without state changes. */
    public Entry(String name, String kind, JsonNode output, JsonNode error, boolean timedOut) {
      this(name, kind, output, error, timedOut, null);
    }

    static Entry of(JsonNode n) {
      return new Entry(
          text(n, "name"),
          text(n, "kind"),
          n.get("output"),
          n.get("error"),
          n.path("timedOut").asBoolean(),
          n.get("state"));
    }
  }

  /**
   * The task a node of the server's answer holds, read field by field: what data binding would make
   * of it (unknown fields skipped, a missing one null or zero, a JSON null in a value field a
   * {@code NullNode}) without its round trip through a token buffer and reflection: about 0.7
   * against 1.7 µs a task.
   */
  public static Task of(JsonNode n) {
    JsonNode rows = n.get("journal");
    List<Entry> journal = null;
    if (rows != null && !rows.isNull()) {
      journal = new ArrayList<>(rows.size());
      for (JsonNode row : rows) {
        journal.add(Entry.of(row));
      }
    }
    String started = text(n, "startedAt");
    return new Task(
        n.path("runId").asLong(),
        n.path("messageId").asLong(),
        text(n, "receipt"),
        n.path("attempt").asInt(),
        n.path("version").asInt(),
        text(n, "reason"),
        n.get("input"),
        journal,
        started == null ? null : Instant.parse(started),
        text(n, "traceContext"),
        n.get("stepOptions"));
  }

  /**
   * A task the engine leased in this process: its input and journal, JSON text in the protocol's
   * record, parsed once here.
   */
  public static Task of(dev.pgworkflows.protocol.Task t) {
    List<Entry> journal = null;
    try {
      JsonNode input = t.input() == null ? null : Transport.JSON.readTree(t.input());
      if (t.journal() != null) {
        journal = entries(t.journal());
      }
      return new Task(
          t.runId(),
          t.messageId(),
          t.receipt(),
          t.attempt(),
          t.version(),
          t.reason(),
          input,
          journal,
          t.startedAt(),
          t.traceContext(),
          t.stepOptions() == null ? null : Transport.JSON.readTree(t.stepOptions()));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a leased task's JSON does not read: " + e.getMessage(), e);
    }
  }

  /** Journal rows from their JSON array. */
  public static List<Entry> entries(String json) throws JsonProcessingException {
    JsonNode rows = Transport.JSON.readTree(json);
    List<Entry> journal = new ArrayList<>(rows.size());
    for (JsonNode row : rows) {
      journal.add(Entry.of(row));
    }
    return journal;
  }

  /** This task with {@code journal}: one the engine withheld, filled in by the worker. */
  public Task withJournal(List<Entry> journal) {
    return new Task(
        runId,
        messageId,
        receipt,
        attempt,
        version,
        reason,
        input,
        journal,
        startedAt,
        traceContext,
        stepOptions);
  }

  /** The tasks of an answer's {@code tasks} array; none when it has none. */
  public static List<Task> all(JsonNode tasks) {
    if (tasks == null || tasks.isNull()) {
      return List.of();
    }
    List<Task> all = new ArrayList<>(tasks.size());
    for (JsonNode t : tasks) {
      all.add(of(t));
    }
    return all;
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }
}
