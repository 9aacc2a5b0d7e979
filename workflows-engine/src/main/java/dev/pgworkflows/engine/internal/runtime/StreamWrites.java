package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.StreamWrite;
import java.util.List;

/**
 * Appending to a run's stream: each entry is known by its writer and sequence number, so a repeated
 * write is skipped. Every entry is checked before the one database call.
 */
public final class StreamWrites {
  /** The most entries one write may carry. */
  public static final int MAX_ENTRIES = 1000;

  /** The largest value of one entry, as JSON bytes. */
  public static final int MAX_VALUE_BYTES = 64 * 1024;

  private final RunStreamStore store;

  public StreamWrites(RunStreamStore store) {
    this.store = store;
  }

  /** Writes; answers the function's JSON ({@code StreamWritten}). */
  public String write(String workflow, long runId, String stream, StreamWrite body) {
    streamName(stream);
    List<StreamWrite.Entry> entries = body.entries() == null ? List.of() : body.entries();
    if (entries.size() > MAX_ENTRIES) {
      throw ApiException.badRequest(
          "entries", "a write may carry at most " + MAX_ENTRIES + " entries");
    }
    for (int i = 0; i < entries.size(); i++) {
      check(entries.get(i), "entries[" + i + "]");
    }
    try {
      return store.write(
          workflow,
          runId,
          stream,
          Json.MAPPER.writeValueAsString(entries),
          Boolean.TRUE.equals(body.close()));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("entries could not be serialised", e);
    }
  }

  /** A stream's name: checked here and again in SQL. */
  public static String streamName(String stream) {
    if (!Names.isStreamName(stream)) {
      throw ApiException.badRequest(
          "stream",
          "stream name must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\","
              + " not dots alone");
    }
    return stream;
  }

  private static void check(StreamWrite.Entry e, String at) {
    if (e == null) {
      throw ApiException.badRequest(at, at + " must be an object");
    }
    if (e.writer() == null || !(e.writer().isEmpty() || Names.isStepName(e.writer()))) {
      throw ApiException.badRequest(
          at + ".writer", at + ".writer must be \"\" (the workflow body) or a step name");
    }
    if (e.seq() == null || e.seq() < 0) {
      throw ApiException.badRequest(at + ".seq", at + ".seq must be a whole number, 0 or more");
    }
    if (e.value() == null) {
      throw ApiException.badRequest(at + ".value", at + ".value is missing");
    }
    int bytes;
    try {
      bytes = Json.MAPPER.writeValueAsBytes(e.value()).length;
    } catch (JsonProcessingException x) {
      throw ApiException.badRequest(at + ".value", at + ".value could not be read");
    }
    if (bytes > MAX_VALUE_BYTES) {
      throw ApiException.badRequest(
          at + ".value",
          at
              + ".value is "
              + bytes
              + " bytes of JSON; at most "
              + MAX_VALUE_BYTES
              + " are allowed");
    }
  }
}
