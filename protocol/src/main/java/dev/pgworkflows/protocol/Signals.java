package dev.pgworkflows.protocol;

import java.util.List;

/** A run's signals in the order they were sent. */
public record Signals(long runId, List<Signal> signals) {}
