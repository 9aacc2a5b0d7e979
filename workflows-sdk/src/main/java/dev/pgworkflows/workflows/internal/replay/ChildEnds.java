package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.ChildFailedException;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.lang.reflect.Type;
import java.util.Locale;

/** A child run's end as its parent receives it: {runId, workflow, status, output, error}. */
public final class ChildEnds {
  private ChildEnds() {}

  /** The engine event that carries the end of child run {@code runId}. */
  public static String event(long runId) {
    return "__child." + runId;
  }

  /** The child's output as {@code type}; {@link ChildFailedException} unless it completed. */
  public static <O> O output(JsonNode end, Type type) {
    RunStatus status =
        RunStatus.valueOf(end.path("status").asText("failed").toUpperCase(Locale.ROOT));
    if (status != RunStatus.COMPLETED) {
      throw new ChildFailedException(
          end.path("runId").asLong(), end.path("workflow").asText(), status, end.get("error"));
    }
    JsonNode out = end.get("output");
    if (out == null || out.isNull()) {
      return null;
    }
    try {
      return Transport.JSON.treeToValue(out, Transport.JSON.getTypeFactory().constructType(type));
    } catch (java.io.IOException | IllegalArgumentException e) {
      throw new IllegalStateException("child output does not fit " + type.getTypeName(), e);
    }
  }
}
