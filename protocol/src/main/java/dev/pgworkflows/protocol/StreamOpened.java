package dev.pgworkflows.protocol;

/** The first line of a task stream: its id, for slot reports and for ending it. */
public record StreamOpened(String stream) {}
