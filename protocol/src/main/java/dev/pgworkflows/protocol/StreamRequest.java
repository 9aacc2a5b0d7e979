package dev.pgworkflows.protocol;

import java.util.List;

/**
 * {@code POST /v1/workflows/{name}/tasks/stream}: a task stream for a worker of {@code slots} slots
 * in all, open for {@code seconds}, its tasks leased for {@code leaseSeconds}, a journal of more
 * than {@code journalMax} rows withheld as a poll withholds it.
 */
public record StreamRequest(
    List<Integer> versions,
    Integer slots,
    Integer seconds,
    Integer leaseSeconds,
    Integer journalMax) {

  /** A stream whose tasks carry their whole journals. */
  public StreamRequest(
      List<Integer> versions, Integer slots, Integer seconds, Integer leaseSeconds) {
    this(versions, slots, seconds, leaseSeconds, null);
  }
}
