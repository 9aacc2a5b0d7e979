package dev.pgworkflows.protocol;

import java.util.Map;

/**
 * Which workers take a workflow's tasks: only those whose labels hold every label of {@code
 * require}; of those, the ones whose labels hold {@code prefer} while the registry lists one; and,
 * when {@code sticky}, each run's later tasks go to the worker that took its last task while the
 * registry lists that worker. Null selectors and {@code sticky} false or null: any worker.
 */
public record WorkerRouting(
    String workflow, Map<String, String> require, Map<String, String> prefer, Boolean sticky) {}
