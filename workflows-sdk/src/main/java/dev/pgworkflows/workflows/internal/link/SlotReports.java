package dev.pgworkflows.workflows.internal.link;

import dev.pgworkflows.protocol.Headers;

/**
 * Where a worker's writes get the report of its free slots that tells its task stream how many
 * tasks to send. Writes that end a task's use of its slot carry one in the {@value #HEADER} header.
 */
public interface SlotReports {
  /** The header a report travels in. */
  String HEADER = Headers.TASK_STREAM_SLOTS;

  /** No task stream: no reports. */
  SlotReports NONE = freeing -> null;

  /**
   * The report for a write after which {@code freeing} more slots are free, or null when no stream
   * is open.
   */
  String report(int freeing);
}
