package dev.pgworkflows.protocol;

/** Whether a message group of a queue is paused: receives pass it by, sends still go in. */
public record GroupPause(String queue, String group, boolean paused) {}
