package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * Entries for a run's stream, in order, and whether to close it after them. Each entry names its
 * write: {@code writer} is the step's name ({@code ""} for the workflow body) and {@code seq} the
 * index of the write within the step's attempt (or the body); a repeat of an identity the stream
 * holds is skipped.
 */
public record StreamWrite(List<Entry> entries, Boolean close) {
  /** One write: who wrote it, its index, its value. */
  public record Entry(String writer, Integer seq, JsonNode value) {}
}
