package dev.pgworkflows.protocol;

/** How many runs a query selects. */
public record RunCount(String query, long count) {}
