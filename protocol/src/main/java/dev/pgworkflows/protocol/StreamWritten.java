package dev.pgworkflows.protocol;

/**
 * A stream write's answer: how many of its entries were new, the stream's size after it (the offset
 * its next entry takes), and whether the stream is closed.
 */
public record StreamWritten(int written, long next, boolean closed) {}
