package dev.pgworkflows.protocol;

/** Restarts an ended run from {@code fromStep}: that journal row and the later ones set aside. */
public record RestartRequest(String fromStep) {}
