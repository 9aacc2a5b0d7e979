package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.RunStateLimits;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.workflows.RunState;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.lang.reflect.Type;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * The run's state as the body and its steps see it, and the changes not journaled yet.
 *
 * <p>The view is the fold of the journal rows replay has passed (each row's changes applied when
 * replay reaches it, see {@link Journal}), plus what this execution changed. A step's changes are
 * kept apart while it runs: journaled with its row when it succeeds, dropped when the attempt
 * fails. The body's changes wait for the run's next new row ({@link #attach}); where a write has no
 * row of its own (a wait, a parallel group, a run's end with nothing to journal) they travel in an
 * engine row {@code __state.<n>} ({@link #carrier}). A body change made while replay still has rows
 * ahead was journaled with the next of them the first time, so it only updates the view.
 */
final class RunStateMap implements RunState {
  /** The prefix of the engine rows that carry the body's changes alone. */
  static final String CARRIER = Journal.RESERVED + "state.";

  private final Journal journal;
  private final Thread body;
  private final Map<String, JsonNode> view = new HashMap<>();
  private ObjectNode pending;
  private boolean stepRunning;
  // The running step's changes; made at its first change, so a step that makes none costs nothing.
  private ObjectNode step;
  private boolean inGroup;
  private int carriers;

  /** The state of a replay whose body runs on the calling thread. */
  RunStateMap(Journal journal) {
    this.journal = journal;
    this.body = Thread.currentThread();
    this.carriers = journal.carriers();
  }

  @Override
  public void put(String key, Object value) {
    JsonNode json = value == null ? NullNode.getInstance() : Transport.JSON.valueToTree(value);
    change(key, json);
  }

  @Override
  public void remove(String key) {
    change(key, NullNode.getInstance());
  }

  @Override
  public <T> T get(String key, Class<T> type) {
    return read(key, type);
  }

  @Override
  public <T> T get(String key, TypeRef<T> type) {
    return read(key, type.type());
  }

  private synchronized <T> T read(String key, Type type) {
    check(key);
    JsonNode v = step != null && step.has(key) ? step.get(key) : view.get(key);
    return StepValues.convert(v, type);
  }

  private synchronized void change(String key, JsonNode value) {
    check(key);
    writer(key);
    if (inGroup) {
      throw new IllegalStateException(
          "state key \""
              + key
              + "\" was changed in a parallel branch; branches may only read state");
    }
    String tooLarge = RunStateLimits.valueProblem("state", key, value);
    if (tooLarge != null) {
      throw new IllegalArgumentException(tooLarge);
    }
    if (!value.isNull() && !isSet(key) && countSet() >= RunStateLimits.MAX_KEYS) {
      throw new IllegalArgumentException(
          "state key \""
              + key
              + "\" would be key "
              + (RunStateLimits.MAX_KEYS + 1)
              + " of the run; a run holds at most "
              + RunStateLimits.MAX_KEYS);
    }
    if (stepRunning) {
      if (step == null) {
        step = Transport.JSON.createObjectNode();
      }
      step.set(key, value);
      return;
    }
    apply(key, value);
    if (!journal.replaying()) {
      if (pending == null) {
        pending = Transport.JSON.createObjectNode();
      }
      pending.set(key, value);
    }
  }

  /**
   * Refuses a change from a thread that is neither the body's nor a live step attempt's, as {@link
   * RunStreams} refuses such a write: a thread an attempt left running after it timed out would
   * otherwise change state as the body or as the next step, and a thread a step started has no
   * place in the journal. Checked under this map's lock, which the end of a step also takes after
   * its attempt is over, so a change either lands in the attempt it belongs to or is refused.
   */
  private void writer(String key) {
    RunStreams.Attempt attempt = RunStreams.Attempt.current();
    if (attempt != null) {
      if (attempt.over()) {
        throw new IllegalStateException(
            "step "
                + attempt.step()
                + " changed state key \""
                + key
                + "\" after its attempt was over (it timed out): a thread an attempt leaves running"
                + " may not change state");
      }
      return;
    }
    if (Thread.currentThread() != body) {
      throw new IllegalStateException(
          "state key \""
              + key
              + "\" was changed from thread "
              + Thread.currentThread().getName()
              + ", neither the workflow body's nor a step's: change state from the body, or from a"
              + " step's code on the thread the step runs on (not from threads it starts)");
    }
  }

  private static void check(String key) {
    String problem = RunStateLimits.keyProblem("state", key);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }

  private boolean isSet(String key) {
    JsonNode v = step != null && step.has(key) ? step.get(key) : view.get(key);
    return v != null && !v.isNull();
  }

  private int countSet() {
    return keysAfter(view, step);
  }

  /** How many keys {@code set} holds once {@code changes} (null: none) are made to it. */
  static int keysAfter(Map<String, JsonNode> set, ObjectNode changes) {
    int n = set.size();
    if (changes != null) {
      for (Map.Entry<String, JsonNode> e : changes.properties()) {
        boolean had = set.containsKey(e.getKey());
        if (e.getValue().isNull() && had) {
          n--;
        } else if (!e.getValue().isNull() && !had) {
          n++;
        }
      }
    }
    return n;
  }

  private void apply(String key, JsonNode value) {
    if (value.isNull()) {
      view.remove(key);
    } else {
      view.put(key, value);
    }
  }

  /** A journaled row's changes, as replay passes the row. */
  synchronized void replayed(JsonNode changes) {
    if (changes != null && changes.isObject()) {
      changes.properties().forEach(e -> apply(e.getKey(), e.getValue()));
    }
  }

  /**
   * An answered update's row, as replay passes it: its changes join the view. The body's changes
   * not journaled yet come after it (they go with the body's next row, after the update's), so they
   * stay on top; unless they are the very changes of the carrier the update follows, made again by
   * a body that got this far before: those came before the update, and are journaled already.
   */
  synchronized void updatePassed(JsonNode changes) {
    if (pending != null
        && carriers == journal.carriers()
        && pending.equals(journal.tailCarrier())) {
      pending = null;
    }
    replayed(changes);
    if (pending != null) {
      pending.properties().forEach(e -> apply(e.getKey(), e.getValue()));
    }
  }

  /** A new step's code is about to run: its changes are kept apart until it ends. */
  synchronized void stepStarted() {
    stepRunning = true;
  }

  /** The step's attempt failed: its changes are dropped, as though it never ran. */
  synchronized void stepFailed() {
    stepRunning = false;
    step = null;
  }

  /** The step succeeded: its changes join the view and go with its row. */
  synchronized ObjectNode stepSucceeded() {
    ObjectNode mine = step;
    stepRunning = false;
    step = null;
    if (mine == null) {
      return null;
    }
    mine.properties().forEach(e -> apply(e.getKey(), e.getValue()));
    return mine;
  }

  /** Parallel branches run meanwhile: they may read state, not change it. */
  synchronized void groupRunning(boolean running) {
    inGroup = running;
  }

  /**
   * A new row's record with the body's waiting changes and then {@code own} (the row's step's
   * changes, or null), which are then sent with it.
   */
  synchronized StepRecord attach(StepRecord row, ObjectNode own) {
    ObjectNode changes = takePending();
    if (own != null) {
      if (changes == null) {
        changes = own;
      } else {
        changes.setAll(own);
      }
    }
    return changes == null ? row : row.withState(changes);
  }

  /**
   * The record that ends the run: {@code unsent} (the last step's, or null) with the body's waiting
   * changes after its own, or a carrier when there is no such step. Safe only at the run's end:
   * nothing replays past it, so no replay reads the body's later changes early.
   */
  synchronized StepRecord atEnd(StepRecord unsent, Instant now) {
    if (pending == null) {
      return unsent;
    }
    if (unsent == null) {
      return carrier(now);
    }
    ObjectNode changes = Transport.JSON.createObjectNode();
    if (unsent.state() != null && unsent.state().isObject()) {
      changes.setAll((ObjectNode) unsent.state());
    }
    changes.setAll(takePending());
    return unsent.withState(changes);
  }

  /** Whether body changes wait for a row. */
  synchronized boolean hasPending() {
    return pending != null;
  }

  /** A row of its own carrying the body's waiting changes, or null when there are none. */
  synchronized StepRecord carrier(Instant now) {
    ObjectNode changes = takePending();
    if (changes == null) {
      return null;
    }
    if (carriers == journal.carriers() && changes.equals(journal.tailCarrier())) {
      // The journal ends with these very changes, carried by an execution that stopped after
      // them (its branches rate limited, say): writing them again would only repeat the row.
      return null;
    }
    String name = CARRIER + (++carriers);
    return new StepRecord(name, "run", null, null, now, changes);
  }

  private ObjectNode takePending() {
    ObjectNode p = pending;
    pending = null;
    return p;
  }
}
