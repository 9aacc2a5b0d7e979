package dev.pgworkflows.protocol;

import java.util.List;

/**
 * Tasks to lease with a batch of completions, for the worker's slots those completions free (a run
 * that ended or was handed back): as a poll with these terms would, without waiting (a journal of
 * more than {@code journalMax} rows withheld as there).
 */
public record Take(List<Integer> versions, Integer max, Integer leaseSeconds, Integer journalMax) {

  /** A take whose tasks carry their whole journals. */
  public Take(List<Integer> versions, Integer max, Integer leaseSeconds) {
    this(versions, max, leaseSeconds, null);
  }
}
