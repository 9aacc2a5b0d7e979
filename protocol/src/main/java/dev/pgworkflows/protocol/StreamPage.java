package dev.pgworkflows.protocol;

import java.util.List;

/**
 * Entries of a run's stream from an offset. {@code next}: the offset to read from next; {@code
 * closed}: no entry will be added (the stream was closed or the run ended); {@code end}: closed and
 * nothing is left past {@code next}.
 */
public record StreamPage(
    String stream,
    List<StreamEntry> entries,
    long next,
    boolean closed,
    boolean end,
    String runStatus) {}
