package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.Optional;

/**
 * The durable verbs. Each is named; the name is the step's key in the journal and must be unique
 * within a run and reached in the same order on every replay.
 *
 * <p>On crash and replay: a step whose result was journaled returns that result and does not run
 * again. A step that was running when its worker died runs again (at-least-once), so step code
 * should be idempotent. Its result is journaled exactly once.
 */
public interface StepContext {

  /** Step code that returns a value. */
  @FunctionalInterface
  interface Fn<T> {
    T call() throws Exception;
  }

  /** Step code that returns nothing. */
  @FunctionalInterface
  interface Action {
    void run() throws Exception;
  }

  /** Runs {@code fn} once (with the default {@link Retry}), journals and returns its result. */
  <T> T run(String name, Class<T> type, Fn<T> fn);

  /** Like {@link #run(String, Class, Fn)} with a retry policy. */
  <T> T run(String name, Class<T> type, Fn<T> fn, Retry retry);

  /** For generic results: {@code run("load", new TypeRef<List<Item>>() {}, ...)}. */
  <T> T run(String name, TypeRef<T> type, Fn<T> fn, Retry retry);

  /** A step without a result. */
  void run(String name, Action action);

  void run(String name, Action action, Retry retry);

  /**
   * Suspends the run for {@code duration}; the worker is free meanwhile. The wake-up time is
   * journaled, so a replay after the sleep does not sleep again.
   */
  void sleep(String name, Duration duration);

  /**
   * Suspends until a signal named {@code name} whose payload contains {@code match} arrives, or
   * {@code timeout} passes. Returns the payload, or empty on timeout. Signals sent before the wait
   * began are not buffered.
   */
  <T> Optional<T> waitForEvent(String name, Class<T> type, Match match, Duration timeout);

  <T> Optional<T> waitForEvent(String name, TypeRef<T> type, Match match, Duration timeout);
}
