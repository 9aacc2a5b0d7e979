package dev.pgworkflows.testkit;

import java.nio.file.Path;
import java.util.List;

/**
 * What a {@link ReplayCheck} found: the runs it replayed, those it left alone (another workflow's,
 * or another version's, which that version's workers finish), and the runs the code would fail.
 */
public record ReplayReport(
    String workflow, List<Long> checked, List<Skipped> skipped, List<ReplayFailure> failures) {

  /** A run the check did not replay, and why. */
  public record Skipped(long runId, Path file, String why) {}

  public ReplayReport {
    checked = List.copyOf(checked);
    skipped = List.copyOf(skipped);
    failures = List.copyOf(failures);
  }

  /** Whether every run replayed as far as its journal goes. */
  public boolean isCompatible() {
    return failures.isEmpty();
  }

  /** Throws an {@link AssertionError} listing every failure, for a CI gate. */
  public void assertCompatible() {
    if (!isCompatible()) {
      throw new AssertionError(this);
    }
  }

  @Override
  public String toString() {
    StringBuilder s =
        new StringBuilder()
            .append(workflow)
            .append(": ")
            .append(checked.size())
            .append(checked.size() == 1 ? " run" : " runs")
            .append(" replayed, ");
    if (failures.isEmpty()) {
      return s.append("all compatible").toString();
    }
    s.append(failures.size()).append(" would fail with the new code:");
    for (ReplayFailure f : failures) {
      s.append(System.lineSeparator()).append("  ").append(f);
    }
    return s.toString();
  }
}
