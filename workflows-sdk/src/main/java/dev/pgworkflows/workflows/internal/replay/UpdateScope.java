package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.RunStateLimits;
import dev.pgworkflows.protocol.UpdateAnswers;
import dev.pgworkflows.workflows.RunState;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.UpdateContext;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one update's validator and handler see: the run's state as the update task found it (with
 * the changes of the updates answered before in the task), this update's changes kept apart, and
 * the signals it sends. A validator's scope refuses changes and signals.
 */
final class UpdateScope implements UpdateContext, RunState {
  private final String workflow;
  private final long runId;
  private final String update;
  private final Map<String, JsonNode> state;
  private final ObjectNode changes = Transport.JSON.createObjectNode();
  private final List<UpdateAnswers.SelfSignal> signals = new ArrayList<>();
  private boolean validating = true;

  UpdateScope(String workflow, long runId, String update, Map<String, JsonNode> state) {
    this.workflow = workflow;
    this.runId = runId;
    this.update = update;
    this.state = state;
  }

  /** The validator has passed: the handler may change state and send signals. */
  void handling() {
    validating = false;
  }

  /** This update's state changes; null when it made none. */
  ObjectNode changes() {
    return changes.isEmpty() ? null : changes;
  }

  /** The signals it sends; null when none. */
  List<UpdateAnswers.SelfSignal> signals() {
    return signals.isEmpty() ? null : List.copyOf(signals);
  }

  /** Makes this update's changes part of the state the next update of the task starts from. */
  void commit() {
    changes
        .properties()
        .forEach(
            e -> {
              if (e.getValue().isNull()) {
                state.remove(e.getKey());
              } else {
                state.put(e.getKey(), e.getValue());
              }
            });
  }

  @Override
  public String workflow() {
    return workflow;
  }

  @Override
  public long runId() {
    return runId;
  }

  @Override
  public String update() {
    return update;
  }

  @Override
  public RunState state() {
    return this;
  }

  @Override
  public void signal(String event, Object payload) {
    writable("a signal to event " + event);
    if (!Names.isEventName(event) || event.startsWith("__")) {
      throw new IllegalArgumentException(
          "event \""
              + event
              + "\" must be 1 to 128 characters of A-Z, a-z, 0-9, \".\", \"_\", \":\", \"-\", not"
              + " starting with \"__\"");
    }
    signals.add(new UpdateAnswers.SelfSignal(event, Transport.JSON.valueToTree(payload)));
  }

  @Override
  public void put(String key, Object value) {
    change(key, value == null ? NullNode.getInstance() : Transport.JSON.valueToTree(value));
  }

  @Override
  public void remove(String key) {
    change(key, NullNode.getInstance());
  }

  private void change(String key, JsonNode value) {
    writable("a change of state key " + key);
    check(key);
    String tooLarge = RunStateLimits.valueProblem("state", key, value);
    if (tooLarge != null) {
      throw new IllegalArgumentException(tooLarge);
    }
    if (!value.isNull() && current(key) == null && countSet() >= RunStateLimits.MAX_KEYS) {
      throw new IllegalArgumentException(
          "state key \""
              + key
              + "\" would be one key too many; a run holds at most "
              + RunStateLimits.MAX_KEYS);
    }
    changes.set(key, value);
  }

  private void writable(String what) {
    if (validating) {
      throw new IllegalStateException(
          what + " was made in update " + update + "'s validator; a validator only reads");
    }
  }

  @Override
  public <T> T get(String key, Class<T> type) {
    return read(key, type);
  }

  @Override
  public <T> T get(String key, TypeRef<T> type) {
    return read(key, type.type());
  }

  private <T> T read(String key, Type type) {
    check(key);
    return StepValues.convert(current(key), type);
  }

  private JsonNode current(String key) {
    JsonNode v = changes.has(key) ? changes.get(key) : state.get(key);
    return v == null || v.isNull() ? null : v;
  }

  private int countSet() {
    return RunStateMap.keysAfter(state, changes);
  }

  private static void check(String key) {
    String problem = RunStateLimits.keyProblem("state", key);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }
}
