package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A batch completion's answer: an outcome per completion, in order, and the tasks it took when it
 * asked for some ({@code tasks} is absent otherwise).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CompletionAnswers(List<CompletionOutcome> results, List<Task> tasks) {}
