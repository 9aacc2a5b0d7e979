package dev.pgworkflows.workflows;

/**
 * A small key-value map per run that callers read from outside while the run is in flight ({@code
 * GET /v1/workflows/{name}/runs/{runId}/state}, {@link Runs#state}, {@link Runs#awaitState}):
 * progress, a status for a user, a value another service waits for.
 *
 * <p>Set from the body or from step code (through the same {@code ctx}). Changes are journaled with
 * a journal row, in its transaction: a step's with the step's own row, so state is never visible
 * from a step that did not commit (a failed attempt, a worker killed mid-step); the body's with the
 * run's next row (its next step, sleep, wait, or its end). A replay reads back exactly what the
 * first execution read at the same point, and does not journal the body's changes again.
 *
 * <p>Limits (an {@link IllegalArgumentException} naming the key and the limit): keys of 1 to 128
 * characters of a-z, A-Z, 0-9, ".", "_" and "-", not starting with {@code __}; values of at most
 * 65536 bytes of JSON; at most 100 keys set in one run. Branches of a parallel group may read state
 * but not change it.
 *
 * <p>Changes come from the body's thread or from a step's code on the thread the step runs on; any
 * other thread (one a step started, or one a timed-out step left running) gets an {@link
 * IllegalStateException}, as its change would land in the wrong row.
 *
 * <p>Cost: reading a run's state (from outside, and the key limit's check when a row carries
 * changes) folds the run's journal rows that carry state, so it grows with the number of such rows.
 * State is meant for a small number of updates (a phase, a percentage every few steps), not for
 * per-item progress across loops of thousands of steps.
 */
public interface RunState {

  /** Sets {@code key} to {@code value} (written as JSON); a null value removes the key. */
  void put(String key, Object value);

  /** The value of {@code key} as {@code type}, or null when it is not set. */
  <T> T get(String key, Class<T> type);

  /** For generic values: {@code get("items", new TypeRef<List<Item>>() {})}. */
  <T> T get(String key, TypeRef<T> type);

  /** Removes {@code key} (nothing when it is not set). */
  void remove(String key);
}
