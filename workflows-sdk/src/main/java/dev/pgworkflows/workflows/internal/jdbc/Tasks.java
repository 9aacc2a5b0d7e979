package dev.pgworkflows.workflows.internal.jdbc;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.util.ArrayList;
import java.util.List;

/** The engine's answers read as the worker reads a server's. */
final class Tasks {
  private Tasks() {}

  /** Leased tasks as the worker replays them: input and journal parsed once. */
  static List<Task> of(List<dev.pgworkflows.protocol.Task> leased) {
    List<Task> tasks = new ArrayList<>(leased.size());
    for (dev.pgworkflows.protocol.Task t : leased) {
      tasks.add(Task.of(t));
    }
    return tasks;
  }

  /** A function's JSON answer as {@code type}. */
  static <T> T read(String json, Class<T> type) {
    try {
      return Transport.JSON.readValue(json, type);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("the engine's answer does not read as " + type, e);
    }
  }
}
