package dev.pgworkflows.protocol;

import java.util.List;

/**
 * Tasks to lease with a batch of completions, for the worker's slots those completions free (a run
 * that ended or was handed back): as a poll with these terms would, without waiting.
 */
public record Take(List<Integer> versions, Integer max, Integer leaseSeconds) {}
