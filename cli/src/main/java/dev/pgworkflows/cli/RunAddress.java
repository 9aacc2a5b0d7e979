package dev.pgworkflows.cli;

import picocli.CommandLine.Parameters;

/** A run, addressed as {@code WORKFLOW RUN_ID}, the same way by every run command. */
final class RunAddress {
  @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The run's workflow.")
  String workflow;

  @Parameters(index = "1", paramLabel = "RUN_ID", description = "The run's id.")
  long runId;

  /** The path of the run, or of something under it: {@code path("steps")}. */
  String path(String... rest) {
    Object[] segments = new Object[5 + rest.length];
    segments[0] = "v1";
    segments[1] = "workflows";
    segments[2] = workflow;
    segments[3] = "runs";
    segments[4] = runId;
    System.arraycopy(rest, 0, segments, 5, rest.length);
    return Api.path(segments);
  }
}
