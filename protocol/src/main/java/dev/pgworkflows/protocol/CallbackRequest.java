package dev.pgworkflows.protocol;

/** The body of a callback's mint: how long, from now, it works (1 second to a year). */
public record CallbackRequest(Long timeoutMs) {}
