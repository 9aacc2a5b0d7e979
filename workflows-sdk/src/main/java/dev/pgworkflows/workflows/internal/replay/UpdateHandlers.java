package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.workflows.UpdateHandler;
import dev.pgworkflows.workflows.UpdateValidator;
import java.lang.reflect.Type;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A workflow's update handlers by name, each with its input type and its validator (or none). */
public final class UpdateHandlers {
  /** The most handlers one workflow declares. */
  public static final int MAX = 50;

  /** One update's handler. */
  public record Entry(
      String name,
      Type inputType,
      UpdateValidator<Object> validator,
      UpdateHandler<Object, ?> handler) {}

  private final Map<String, Entry> byName = new LinkedHashMap<>();

  /**
   * Adds the handler of update {@code name}; an {@link IllegalArgumentException} for a bad or
   * repeated name, a missing handler or input type, or one handler too many.
   */
  @SuppressWarnings("unchecked")
  public <U> void add(
      String name, Type inputType, UpdateValidator<U> validator, UpdateHandler<U, ?> handler) {
    if (!Names.isStepName(name)) {
      throw new IllegalArgumentException(
          "update name \""
              + name
              + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\"");
    }
    if (inputType == null || handler == null) {
      throw new IllegalArgumentException("update " + name + " needs an input type and a handler");
    }
    if (byName.containsKey(name)) {
      throw new IllegalArgumentException("update " + name + " has a handler already");
    }
    if (byName.size() == MAX) {
      throw new IllegalArgumentException("a workflow has at most " + MAX + " update handlers");
    }
    byName.put(
        name,
        new Entry(
            name,
            inputType,
            (UpdateValidator<Object>) validator,
            (UpdateHandler<Object, ?>) handler));
  }

  /** The handler of update {@code name}, or null. */
  public Entry get(String name) {
    return byName.get(name);
  }

  /** Every handler, in the order they were added. */
  public Map<String, Entry> all() {
    return Collections.unmodifiableMap(byName);
  }

  /** A copy, for a definition that must not change when its builder does. */
  public UpdateHandlers copy() {
    UpdateHandlers c = new UpdateHandlers();
    c.byName.putAll(byName);
    return c;
  }
}
