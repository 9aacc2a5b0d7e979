package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.lang.reflect.Type;

/** A journaled JSON value read back as the Java type the body asks for. */
final class StepValues {
  private StepValues() {}

  @SuppressWarnings("unchecked")
  static <T> T convert(JsonNode node, Type type) {
    if (type == Void.class || type == void.class) {
      return null;
    }
    if (node == null || node.isNull()) {
      return null;
    }
    JavaType jt = Transport.JSON.getTypeFactory().constructType(type);
    try {
      return (T) Transport.JSON.treeToValue(node, jt);
    } catch (java.io.IOException | IllegalArgumentException e) {
      throw new IllegalStateException(
          "journaled value does not fit " + jt + ": " + e.getMessage(), e);
    }
  }
}
