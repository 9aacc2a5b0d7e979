package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.workflows.StepFailedException;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.io.PrintWriter;
import java.io.StringWriter;

/** A failure as the journal and the run's result hold it: type, message, step and stack. */
final class StepErrors {
  private static final int MAX_STACK = 8000;

  private StepErrors() {}

  /** The JSON of {@code t}, naming {@code step} when the failure belongs to one. */
  static ObjectNode json(Throwable t, String step) {
    ObjectNode e = Transport.JSON.createObjectNode();
    e.put("type", t.getClass().getName());
    e.put("message", String.valueOf(t.getMessage()));
    if (step != null) {
      e.put("step", step);
    }
    StringWriter sw = new StringWriter();
    t.printStackTrace(new PrintWriter(sw));
    String stack = sw.toString();
    e.put("stack", stack.length() > MAX_STACK ? stack.substring(0, MAX_STACK) : stack);
    return e;
  }

  /** What the body sees of a step that failed for good: the same on every replay. */
  static StepFailedException failed(String name, JsonNode error) {
    return new StepFailedException(
        name, error.path("type").asText("unknown"), error.path("message").asText(""));
  }
}
