package dev.pgworkflows.protocol;

import java.util.List;

/** A poll's answer, and each batch of tasks a task stream writes. */
public record Tasks(List<Task> tasks) {}
