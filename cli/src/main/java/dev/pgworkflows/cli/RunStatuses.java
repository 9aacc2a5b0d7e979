package dev.pgworkflows.cli;

import java.util.ArrayList;
import java.util.List;

/** The statuses a run can have, for completion of {@code --status}. */
final class RunStatuses extends ArrayList<String> {
  private static final long serialVersionUID = 1L;

  RunStatuses() {
    super(List.of("running", "completed", "failed", "cancelled", "timed_out"));
  }
}
