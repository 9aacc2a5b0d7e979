package dev.pgworkflows.protocol;

import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/tasks/poll}: tasks of these versions, up to {@code max}, waiting
 * up to {@code waitSeconds}, leased for {@code leaseSeconds}; a task whose journal has more than
 * {@code journalMax} rows comes with a null journal, for a worker that keeps its runs' journals
 * ({@link JournalTail}). Null fields take the server's defaults (every journal whole).
 */
public record PollRequest(
    List<Integer> versions,
    Integer max,
    Integer waitSeconds,
    Integer leaseSeconds,
    Integer journalMax) {

  /** A poll whose tasks carry their whole journals. */
  public PollRequest(
      List<Integer> versions, Integer max, Integer waitSeconds, Integer leaseSeconds) {
    this(versions, max, waitSeconds, leaseSeconds, null);
  }
}
