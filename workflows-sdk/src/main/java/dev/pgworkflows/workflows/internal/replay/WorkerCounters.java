package dev.pgworkflows.workflows.internal.replay;

import java.util.concurrent.atomic.LongAdder;

/**
 * A worker's running counts, one {@link LongAdder} each: runner threads increment them without
 * contending, and {@link dev.pgworkflows.workflows.Worker#metrics()} sums them when read.
 */
public final class WorkerCounters {
  /** Counts nothing anyone reads (a replay with no worker). */
  public static final WorkerCounters NONE = new WorkerCounters();

  public final LongAdder tasks = new LongAdder();
  public final LongAdder stepsSucceeded = new LongAdder();
  public final LongAdder stepsFailed = new LongAdder();
  public final LongAdder runsCompleted = new LongAdder();
  public final LongAdder runsFailed = new LongAdder();
}
