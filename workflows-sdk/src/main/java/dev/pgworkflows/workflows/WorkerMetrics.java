package dev.pgworkflows.workflows;

/**
 * What a {@link Worker} has done since it started, counted as it goes: a snapshot for a metrics
 * library to read ({@link Worker#metrics()}). Counts only grow while the worker lives.
 *
 * @param slots runs the worker handles at once ({@link WorkerOptions#concurrency})
 * @param busySlots slots handling a run right now
 * @param tasks tasks taken: each time a run came to this worker (a start, or a resume after a
 *     sleep, a wait, a retry's backoff or another worker's lost lease)
 * @param stepsSucceeded step attempts whose code returned (parallel branches included), replayed
 *     steps not counted
 * @param stepsFailed step attempts whose code threw, retried or not
 * @param runsCompleted runs whose body returned on this worker
 * @param runsFailed runs this worker failed: the body threw or its code no longer matched the
 *     journal
 */
public record WorkerMetrics(
    int slots,
    int busySlots,
    long tasks,
    long stepsSucceeded,
    long stepsFailed,
    long runsCompleted,
    long runsFailed) {}
