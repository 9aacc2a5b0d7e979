package dev.pgworkflows.engine.internal.runtime;

import java.util.List;
import java.util.TreeSet;

/** What a waiting poll takes: runs of these versions, up to {@code max}, leased for so long. */
public record PollTerms(List<Integer> versions, int max, int leaseSeconds) {

  public PollTerms {
    versions = List.copyOf(versions);
  }

  /**
   * What a waiting poll can take, for passing on a wake-up it could not use: polls that list the
   * same versions in another order take the same runs and are one kind.
   */
  public static String waitKey(List<Integer> versions) {
    return new TreeSet<>(versions).toString();
  }
}
