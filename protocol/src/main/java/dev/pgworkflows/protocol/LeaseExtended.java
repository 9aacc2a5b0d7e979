package dev.pgworkflows.protocol;

/** A lease extension's answer: the receipt to present from now on. */
public record LeaseExtended(String receipt) {}
