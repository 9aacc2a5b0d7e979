package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A run's journal as the body's replay walks it. Each step call either matches the next journaled
 * entry, whose stored result it then returns, or is new; names must be unique within the run and
 * reached in journal order, else the body is not deterministic.
 */
final class Journal {

  /** The prefix of the engine's own journal rows, which step names cannot have. */
  static final String RESERVED = "__";

  /** The prefix of the rows of answered updates, {@code __update.<updateId>}. */
  static final String UPDATE = RESERVED + "update.";

  private final long runId;
  private final List<Task.Entry> entries;
  private final Set<String> seen = new HashSet<>();
  private final Task.Entry pending;
  private final int carriers;
  // The changes of the carrier row that ends the journal, while this execution has added no row.
  private JsonNode tailCarrier;
  private Consumer<JsonNode> replayedState = s -> {};
  private Consumer<JsonNode> passedUpdate = s -> {};
  // The end of the rows replay must pass before the body's changes are new: the last row that is
  // not an update's, plus one.
  private int replayEnd;
  private int index;
  private NonDeterministicWorkflowException firstMismatch;
  private int mismatchAt;

  Journal(long runId, List<Task.Entry> entries) {
    this(runId, entries, null);
  }

  /**
   * A journal that ends with {@code pending} (null: none), the step its run waits in and whose row
   * the server has not written yet. Only a replay without a server ({@link ReplayOnly}) has one:
   * the body reaching it stops there, and any other step reached in its place does not match, as it
   * would not once the row is written.
   */
  Journal(long runId, List<Task.Entry> entries, Task.Entry pending) {
    this.runId = runId;
    this.entries = new ArrayList<>(entries == null ? 16 : entries.size());
    int n = 0;
    if (entries != null) {
      for (Task.Entry e : entries) {
        // The rows that carry only the body's state changes are not replayed: the body makes
        // those changes again as it goes (see RunStateMap).
        if (e.name() != null && e.name().startsWith(RunStateMap.CARRIER)) {
          n++;
          tailCarrier = e.state();
        } else if (isUpdate(e)) {
          // An update's row leaves the carrier before it the journal's last: the body's changes
          // that carrier holds came before the update.
          this.entries.add(e);
        } else {
          this.entries.add(e);
          replayEnd = this.entries.size();
          tailCarrier = null;
        }
      }
    }
    this.carriers = n;
    this.pending = pending;
    if (pending != null) {
      this.entries.add(pending);
      replayEnd = this.entries.size();
    }
  }

  private static boolean isUpdate(Task.Entry e) {
    return e.name() != null && e.name().startsWith(UPDATE);
  }

  /**
   * Passes the rows of updates answered at this point (while the run slept or waited here, or
   * between two of its tasks), applying their state changes: before the body's next step matches
   * its row or runs, and as soon as the sleep or wait they followed returns. Live and in replay
   * alike, so the body reads the same state at the same point on every replay.
   */
  private void passUpdates() {
    while (index < entries.size() && isUpdate(entries.get(index))) {
      passedUpdate.accept(entries.get(index++).state());
    }
  }

  /** Hears each passed update row's state changes. */
  void onPassedUpdate(Consumer<JsonNode> consumer) {
    this.passedUpdate = consumer;
  }

  /** How many rows carrying only state changes the run has journaled. */
  int carriers() {
    return carriers;
  }

  /**
   * The changes of the carrier row the journal ends with, while no row has been added since; null
   * otherwise. A retried execution that reaches the same point with the same body changes finds
   * them journaled already.
   */
  JsonNode tailCarrier() {
    return tailCarrier;
  }

  /** Hears each replayed row's state changes, as replay passes the row. */
  void onReplayedState(Consumer<JsonNode> consumer) {
    this.replayedState = consumer;
  }

  private Task.Entry passed(Task.Entry e) {
    if (e.state() != null) {
      replayedState.accept(e.state());
    }
    return e;
  }

  /**
   * The journal entry for step {@code name} when replaying, null when the step is new. Throws
   * {@link NonDeterministicWorkflowException} when the name was used before in this run, or the
   * journal holds another step (or another kind of step) at this point.
   */
  Task.Entry replayed(String name, String kind) {
    checkName(name);
    return next(name, kind);
  }

  /**
   * The journal entry for the engine's own row {@code name} (a name starting with {@value
   * #RESERVED}) as {@link #replayed} finds a step's.
   */
  Task.Entry replayedOwn(String name) {
    return next(name, "run");
  }

  /**
   * The engine's own row {@code name} when it is the next journaled entry (which it then passes),
   * null otherwise.
   */
  Task.Entry nextIfNamed(String name) {
    seen.add(name);
    passUpdates();
    if (index < entries.size() && entries.get(index).name().equals(name)) {
      return passed(entries.get(index++));
    }
    return null;
  }

  /**
   * Whether the journal holds entries that replay has not reached yet (rows of updates answered
   * after the last of them aside: the body's changes past that row are new).
   */
  boolean replaying() {
    return index < replayEnd;
  }

  private Task.Entry next(String name, String kind) {
    if (!seen.add(name)) {
      throw mismatch("step name \"" + name + "\" is used twice in run " + runId);
    }
    passUpdates();
    if (index >= entries.size()) {
      return null;
    }
    Task.Entry e = entries.get(index);
    if (!e.name().equals(name)) {
      throw mismatch(
          "replay of run "
              + runId
              + " reached step \""
              + name
              + "\" where the journal has step \""
              + e.name()
              + "\" (step "
              + (index + 1)
              + ")");
    }
    if (!e.kind().equals(kind)) {
      throw mismatch(
          "step \""
              + name
              + "\" is a "
              + kind
              + " in the code but a "
              + e.kind()
              + " in the journal");
    }
    if (e == pending) {
      throw new Suspend(Suspend.Why.JOURNAL_END);
    }
    index++;
    passed(e);
    if (kind.equals("sleep") || kind.equals("wait")) {
      passUpdates();
    }
    return e;
  }

  /**
   * A mismatch between the code and the journal, the first of which is kept: the body may catch
   * what it is thrown, and a replay without a server still reports it.
   */
  private NonDeterministicWorkflowException mismatch(String message) {
    NonDeterministicWorkflowException e = new NonDeterministicWorkflowException(message);
    if (firstMismatch == null) {
      firstMismatch = e;
      mismatchAt = index + 1;
    }
    return e;
  }

  /** The first mismatch replay found, null when none. */
  NonDeterministicWorkflowException firstMismatch() {
    return firstMismatch;
  }

  /** The journal position (from 1) replay had reached at its first mismatch. */
  int mismatchAt() {
    return mismatchAt;
  }

  /**
   * The journaled entries of a parallel group whose branches are named {@code names}, by name; the
   * branches missing from it are new. Branches finish in any order, so the group's entries are the
   * consecutive run entries from this point whose names are in the group, in whatever order. Throws
   * {@link NonDeterministicWorkflowException} when a name is used twice (in the group or earlier in
   * the run), when a group entry is not a run step, or when the journal holds another step where a
   * branch not journaled yet would be.
   */
  Map<String, Task.Entry> group(List<String> names) {
    Set<String> group = new LinkedHashSet<>();
    for (String name : names) {
      checkName(name);
      if (!group.add(name) || seen.contains(name)) {
        throw mismatch("step name \"" + name + "\" is used twice in run " + runId);
      }
    }
    seen.addAll(group);
    Map<String, Task.Entry> found = new HashMap<>();
    passUpdates();
    while (index < entries.size() && group.contains(entries.get(index).name())) {
      Task.Entry e = entries.get(index);
      if (!e.kind().equals("run")) {
        throw mismatch(
            "step \"" + e.name() + "\" is a run in the code but a " + e.kind() + " in the journal");
      }
      found.put(e.name(), passed(e));
      index++;
      passUpdates();
    }
    if (found.size() < group.size() && index < entries.size()) {
      String missing = group.stream().filter(n -> !found.containsKey(n)).findFirst().orElseThrow();
      throw mismatch(
          "replay of run "
              + runId
              + " reached parallel step \""
              + missing
              + "\" where the journal has step \""
              + entries.get(index).name()
              + "\" (step "
              + (index + 1)
              + ")");
    }
    return found;
  }

  private static void checkName(String name) {
    if (!Names.isStepName(name)) {
      throw new IllegalArgumentException(
          "step name \""
              + name
              + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\", \"-\"");
    }
    if (name.startsWith(RESERVED)) {
      throw new IllegalArgumentException(
          "step name \""
              + name
              + "\" starts with \""
              + RESERVED
              + "\", kept for the engine's rows");
    }
  }

  /** A new step's outcome, which later calls replay as though the server had sent it. */
  void append(Task.Entry entry) {
    passUpdates();
    tailCarrier = null;
    entries.add(entry);
    index++;
    replayEnd = entries.size();
  }

  /** The error journaled for step {@code name}, or null. */
  ObjectNode errorOf(String name) {
    for (Task.Entry e : entries) {
      if (e.name().equals(name) && e.error() instanceof ObjectNode o) {
        return o;
      }
    }
    return null;
  }

  /** Whether {@code error} is a journaled failure (not absent, not JSON null). */
  static boolean isFailure(JsonNode error) {
    return error != null && !error.isNull();
  }
}
