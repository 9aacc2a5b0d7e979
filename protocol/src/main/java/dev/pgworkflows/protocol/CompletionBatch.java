package dev.pgworkflows.protocol;

import java.util.List;

/** {@code POST /v1/workflows/{name}/tasks/complete}: many completions, and tasks to take. */
public record CompletionBatch(List<Completion> completions, Take take) {}
