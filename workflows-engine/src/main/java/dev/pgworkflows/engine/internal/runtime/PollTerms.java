package dev.pgworkflows.engine.internal.runtime;

import java.util.List;
import java.util.TreeSet;

/**
 * What a waiting poll takes: runs of these versions, up to {@code max}, leased for so long; a
 * journal of more than {@code journalMax} rows is withheld (null: never), for a worker that keeps
 * its runs' journals and asks for the rows it lacks.
 */
public record PollTerms(List<Integer> versions, int max, int leaseSeconds, Integer journalMax) {

  public PollTerms {
    versions = List.copyOf(versions);
  }

  /** Terms that always carry the whole journal. */
  public PollTerms(List<Integer> versions, int max, int leaseSeconds) {
    this(versions, max, leaseSeconds, null);
  }

  /** These terms with {@code journalMax}. */
  public PollTerms withJournalMax(Integer journalMax) {
    return new PollTerms(versions, max, leaseSeconds, journalMax);
  }

  /**
   * What a waiting poll can take, for passing on a wake-up it could not use: polls that list the
   * same versions in another order take the same runs and are one kind.
   */
  public static String waitKey(List<Integer> versions) {
    return new TreeSet<>(versions).toString();
  }
}
