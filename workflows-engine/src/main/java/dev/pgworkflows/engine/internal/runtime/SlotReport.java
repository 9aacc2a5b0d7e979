package dev.pgworkflows.engine.internal.runtime;

/**
 * A worker's slot report for its task stream, to apply once the request that carried it has done
 * its work: report {@code number} of stream {@code stream}, {@code seen} of its tasks read, {@code
 * free} slots free.
 */
public record SlotReport(String stream, long number, long seen, long free) {}
