package dev.pgworkflows.sql;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

/**
 * Random interleavings of starts (keyed, with a concurrency key, delayed), polls, completions
 * (sleeps, waits with and without timeouts, waits for a child, ends), retries, continuations as
 * new, child starts, signals, cancels, pauses and resumes, sweeps and moves of the test's clock
 * over two connections, checked after every step against {@link WorkflowModel}: idempotent starts,
 * one task per run, leases that run out, stale receipts changing nothing, each step journaled once
 * (a repeated step changing nothing, alone or in a batch), signals delivered or buffered, timeouts,
 * children reporting their end, one running run per concurrency key with no lost wake-up, paused
 * runs parked, chains, retention. A failure prints the seed and the shrunk sequence of actions (see
 * docs/guarantees.md, "Property tests").
 */
class WorkflowFollowsItsModelTest {
  private static final List<Connection> connections = new ArrayList<>();
  private static long propertyStarted;

  @BeforeContainer
  static void connect() throws SQLException {
    TestDatabase db = TestDatabase.fresh();
    for (int i = 0; i < 2; i++) {
      Connection c = db.connect();
      ModelRuns.guard(c);
      connections.add(c);
    }
  }

  @AfterContainer
  static void close() throws SQLException {
    for (Connection c : connections) {
      c.close();
    }
  }

  @BeforeProperty
  void startClock() {
    propertyStarted = System.nanoTime();
  }

  @Property
  @AddLifecycleHook(SeedInFailure.class)
  @AddLifecycleHook(SeedFromCommandLine.class)
  void runsKeepTheirPromisesUnderAnyInterleaving(
      @ForAll("workflowActions") ActionChain<WorkflowsAgainstModel> chain) {
    ModelRuns.withinBudget(propertyStarted);
    chain.withInvariant("tables match the model", WorkflowsAgainstModel::check).run();
  }

  @Provide
  Arbitrary<ActionChain<WorkflowsAgainstModel>> workflowActions() {
    return ActionChain.startWith(() -> new WorkflowsAgainstModel(connections))
        .withAction(5, start())
        .withAction(7, poll())
        .withAction(7, complete())
        .withAction(2, retry())
        .withAction(1, continueAsNew())
        .withAction(2, startChild())
        .withAction(3, signal())
        .withAction(1, cancel())
        .withAction(2, pause())
        .withAction(2, advance())
        .withAction(1, sweep())
        .withMaxTransformations(50);
  }

  private static Arbitrary<Integer> connection() {
    return Arbitraries.integers().between(0, 1);
  }

  private static Action.Independent<WorkflowsAgainstModel> start() {
    return () ->
        Combinators.combine(
                connection(),
                Arbitraries.of("k1", "k2", "k3").injectNull(0.5),
                Arbitraries.of("a", "b").injectNull(0.5),
                Arbitraries.of(false, false, false, true))
            .as(
                (c, key, concurrencyKey, later) ->
                    Transformer.mutate(
                        "start with key "
                            + key
                            + ", concurrency key "
                            + concurrencyKey
                            + (later ? ", 150 s on" : "")
                            + " on connection "
                            + c,
                        ModelRuns.sql(s -> s.start(c, key, concurrencyKey, later))));
  }

  private static Action.Independent<WorkflowsAgainstModel> poll() {
    return () ->
        Combinators.combine(
                connection(), Arbitraries.integers().between(1, 3), Arbitraries.of(true, false))
            .as(
                (c, qty, lease) ->
                    Transformer.mutate(
                        "poll "
                            + qty
                            + (lease ? " leased 250 s" : " leased 60 s")
                            + " on connection "
                            + c,
                        ModelRuns.sql(s -> s.poll(c, qty, lease))));
  }

  /**
   * A task some worker got, as its index among the tasks handed out (a shrunk sequence replays on a
   * fresh database, where ids differ): the latest ones more often, so most completions are current.
   */
  private static Arbitrary<Integer> someHeld(WorkflowsAgainstModel state) {
    int n = state.model.held.size();
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.integers().between(Math.max(0, n - 3), n - 1)),
        Tuple.of(1, Arbitraries.integers().between(0, n - 1)));
  }

  private static Action.Dependent<WorkflowsAgainstModel> complete() {
    return new Action.Dependent<>() {
      @Override
      public boolean precondition(WorkflowsAgainstModel state) {
        return !state.model.held.isEmpty();
      }

      @Override
      public Arbitrary<Transformer<WorkflowsAgainstModel>> transformer(
          WorkflowsAgainstModel state) {
        return Combinators.combine(
                connection(),
                someHeld(state),
                Arbitraries.of(
                    WorkflowsAgainstModel.Next.SLEEP,
                    WorkflowsAgainstModel.Next.SLEEP,
                    WorkflowsAgainstModel.Next.SLEEP_LONG,
                    WorkflowsAgainstModel.Next.WAIT_E,
                    WorkflowsAgainstModel.Next.WAIT_E,
                    WorkflowsAgainstModel.Next.WAIT_E_TIMED,
                    WorkflowsAgainstModel.Next.WAIT_F,
                    WorkflowsAgainstModel.Next.WAIT_CHILD,
                    WorkflowsAgainstModel.Next.COMPLETED,
                    WorkflowsAgainstModel.Next.FAILED),
                // A repeat of the step journaled last, now and then; a batch of one, as often.
                Arbitraries.of(false, false, true),
                Arbitraries.of(false, true))
            .as(
                (c, h, next, repeat, batch) ->
                    Transformer.mutate(
                        (repeat ? "repeat the last step" : "complete a step")
                            + " of task #"
                            + h
                            + " with "
                            + next
                            + (batch ? " in a batch" : "")
                            + " on connection "
                            + c,
                        ModelRuns.sql(s -> s.complete(c, h, next, repeat, batch))));
      }
    };
  }

  private static Action.Dependent<WorkflowsAgainstModel> retry() {
    return heldAction("fail a step for a retry now, of task #", (s, c, h) -> s.retry(c, h));
  }

  /** The holder of some task ends its run and starts its successor. */
  private static Action.Dependent<WorkflowsAgainstModel> continueAsNew() {
    return heldAction("continue as new from task #", (s, c, h) -> s.continueAsNew(c, h));
  }

  /** The run of some task starts a child for its next step. */
  private static Action.Dependent<WorkflowsAgainstModel> startChild() {
    return heldAction("start a child from the run of task #", (s, c, h) -> s.startChild(c, h));
  }

  interface HeldCall {
    void call(WorkflowsAgainstModel state, int connection, int task) throws SQLException;
  }

  private static Action.Dependent<WorkflowsAgainstModel> heldAction(String what, HeldCall call) {
    return new Action.Dependent<>() {
      @Override
      public boolean precondition(WorkflowsAgainstModel state) {
        return !state.model.held.isEmpty();
      }

      @Override
      public Arbitrary<Transformer<WorkflowsAgainstModel>> transformer(
          WorkflowsAgainstModel state) {
        return Combinators.combine(connection(), someHeld(state))
            .as(
                (c, h) ->
                    Transformer.mutate(
                        what + h + " on connection " + c, ModelRuns.sql(s -> call.call(s, c, h))));
      }
    };
  }

  /**
   * A run of this try (current or swept) as its index among the runs started, or -1 for one that
   * never was.
   */
  private static Arbitrary<Integer> someRun(WorkflowsAgainstModel state) {
    int n = state.startedRuns.size();
    return n == 0
        ? Arbitraries.just(-1)
        : Arbitraries.frequencyOf(
            Tuple.of(1, Arbitraries.just(-1)),
            Tuple.of(3, Arbitraries.integers().between(Math.max(0, n - 2), n - 1)),
            Tuple.of(3, Arbitraries.integers().between(0, n - 1)));
  }

  private static Action.Dependent<WorkflowsAgainstModel> signal() {
    return state ->
        Combinators.combine(
                connection(),
                someRun(state),
                Arbitraries.of("e", "f"),
                Arbitraries.of("once").injectNull(0.8))
            .as(
                (c, run, event, key) ->
                    Transformer.mutate(
                        "signal "
                            + event
                            + " (key "
                            + key
                            + ") to run "
                            + run
                            + " on connection "
                            + c,
                        ModelRuns.sql(s -> s.signal(c, run, event, key))));
  }

  private static Action.Dependent<WorkflowsAgainstModel> cancel() {
    return state ->
        Combinators.combine(connection(), someRun(state))
            .as(
                (c, run) ->
                    Transformer.mutate(
                        "cancel run #" + run + " on connection " + c,
                        ModelRuns.sql(s -> s.cancel(c, run))));
  }

  private static Action.Dependent<WorkflowsAgainstModel> pause() {
    return state ->
        Combinators.combine(connection(), someRun(state), Arbitraries.of(true, false))
            .as(
                (c, run, paused) ->
                    Transformer.mutate(
                        (paused ? "pause" : "resume") + " run #" + run + " on connection " + c,
                        ModelRuns.sql(s -> s.pause(c, run, paused))));
  }

  private static Action.Independent<WorkflowsAgainstModel> advance() {
    return () ->
        Arbitraries.just(
            Transformer.mutate("move the clock on 100 s", WorkflowsAgainstModel::advance));
  }

  private static Action.Independent<WorkflowsAgainstModel> sweep() {
    return () ->
        Combinators.combine(connection(), Arbitraries.of(true, false))
            .as(
                (c, later) ->
                    Transformer.mutate(
                        "sweep " + (later ? "two days on" : "now") + " on connection " + c,
                        ModelRuns.sql(s -> s.sweep(c, later))));
  }
}
