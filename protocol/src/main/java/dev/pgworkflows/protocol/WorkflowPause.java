package dev.pgworkflows.protocol;

import java.time.Instant;

/**
 * Whether a workflow is paused: while it is, starts are taken and none of its runs is handed out.
 *
 * @param pausedAt when it was paused; null when it is not
 */
public record WorkflowPause(String name, boolean paused, Instant pausedAt) {}
