package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The durable verbs. Each is named; the name is the step's key in the journal and must be unique
 * within a run and reached in the same order on every replay. Names starting with {@code __} are
 * kept for the engine's own rows (see {@link WorkflowContext#now}).
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

  /**
   * These steps, with the run steps and parallel groups called through the answer needing a worker
   * whose labels ({@link WorkerOptions#labels}) hold every label of {@code labels}: on a worker
   * without them, the run's task goes to the workers that have them before such a step starts (that
   * delivery does not count as an attempt), and one of them runs it and goes on with the run. Steps
   * already journaled replay anywhere.
   *
   * <pre>{@code
   * double loss = ctx.step().onWorkers(Map.of("gpu", "true")).run("train", Double.class, () -> model.train());
   * }</pre>
   */
  StepContext onWorkers(Map<String, String> labels);

  /**
   * As {@link #onWorkers}, but only while the registry lists a worker with {@code labels}: when
   * none is, the step runs on the worker at hand.
   */
  StepContext preferWorkers(Map<String, String> labels);

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
   * Runs the branches at the same time, each a run step named by its branch, and returns their
   * results in the order of {@code branches}, whatever order they finished in. Each branch retries
   * in its own thread per its {@link Retry} (the run's lease is held meanwhile) and is journaled
   * once, as it finishes: branches that finish together share a request and a transaction. On
   * replay, journaled branches return their stored results and only the others run.
   *
   * <p>The call returns once every branch is journaled. When branches ran out of attempts, it
   * throws the {@link StepFailedException} of the first of them in {@code branches}; the other
   * branches' results stay journaled. Branch names are step names: unique within the run. Code in a
   * branch may not call steps. Branches of different result types may be mixed; the results are
   * then of their common type ({@code Object} at worst).
   */
  <T> List<T> parallel(List<? extends Branch<? extends T>> branches);

  /**
   * Suspends the run for {@code duration}; the worker is free meanwhile. The wake-up time is
   * journaled, so a replay after the sleep does not sleep again.
   */
  void sleep(String name, Duration duration);

  /**
   * Suspends until a signal named {@code name} whose payload contains {@code match} arrives, or
   * {@code timeout} passes. Returns the payload, or empty on timeout. A signal sent before the wait
   * began waits in the run's inbox: the oldest buffered one that fits is taken at once.
   */
  <T> Optional<T> waitForEvent(String name, Class<T> type, Match match, Duration timeout);

  <T> Optional<T> waitForEvent(String name, TypeRef<T> type, Match match, Duration timeout);

  /**
   * Mints a callback, step {@code name}, that works for {@code timeout} (1 second to a year): a URL
   * and token any HTTP client can complete the run's wait with ({@link Callback}). Journaled as a
   * step, so a replay gets the same URL; its wait is {@link Callback#await}, journaled as step
   * {@code <name>.result}, for the event {@code __callback.<name>} (so {@code name} has at most 117
   * characters).
   */
  Callback callback(String name, Duration timeout);

  /**
   * Starts a child run of {@code workflow} with {@code input}, exactly once: a replay of this step
   * gets the same child. The child may be of any workflow and version; {@link ChildRun#result()}
   * waits for it durably.
   */
  <I, O> ChildRun<O> startChild(String name, Workflow<I, O> workflow, I input);

  <I, O> ChildRun<O> startChild(
      String name, Workflow<I, O> workflow, I input, ChildOptions options);

  /**
   * A child of a workflow known by name only (defined elsewhere), its output read as {@code
   * output}.
   */
  <O> ChildRun<O> startChild(
      String name, String workflow, Object input, Class<O> output, ChildOptions options);

  /**
   * One durable wait for the first of several arms (signals with matches, child ends) or the
   * timeout; the journal records which arm fired and its payload. {@code timeout} null waits
   * without one.
   */
  Fired waitForAny(String name, Duration timeout, Arm... arms);

  /**
   * One durable wait for every arm, or the timeout (what fired before it is kept); each arm takes
   * one signal, oldest first, from signals buffered before the wait and those sent during it.
   */
  Fired waitForAll(String name, Duration timeout, Arm... arms);
}
