package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * One of a workflow's cancel-on rules: either a {@code signal} name (that signal, sent to a run,
 * cancels it) or a {@code topic} pattern (a message published on a topic it fits cancels the
 * running runs it concerns); {@code match}, what the payload must contain (as a wait's match), and
 * {@code inputFields}, fields of the payload the run's input must have with the same values.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CancelOnRule(
    String signal, String topic, Map<String, Object> match, List<String> inputFields) {}
