package dev.pgworkflows.testkit;

import java.nio.file.Path;

/**
 * A run the new code could not carry on: replaying its exported journal failed with {@code
 * NonDeterministicWorkflowException} (or its input no longer reads as the workflow's input type).
 *
 * @param runId the run
 * @param file the exported journal it was replayed from
 * @param position the journal position (from 1) where the code and the journal part ways, 0 when
 *     the mismatch is not about a position (a wait's arms, the input)
 * @param message what does not match, as the exception says it: the step the code reached and the
 *     step the journal has there
 */
public record ReplayFailure(long runId, Path file, int position, String message) {
  @Override
  public String toString() {
    return "run " + runId + " (" + file + "): " + message;
  }
}
