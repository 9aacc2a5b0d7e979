package dev.pgworkflows.sql;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

/**
 * Random interleavings of the queue functions over two connections, at a simulated clock, checked
 * after every step against {@link QueueModel}: single flight and order within a FIFO group, read
 * counts, nothing lost, dead letters exactly after max receives, redrive. A failure prints the seed
 * and the shrunk sequence of actions (see docs/guarantees.md, "Property tests").
 */
class QueueFollowsItsModelTest {
  private static final String[] NAMES = {"fifo", "standard"};
  private static final List<Connection> connections = new ArrayList<>();
  private static final List<String> created = new ArrayList<>();
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

  @AfterTry
  void dropQueues() throws SQLException {
    try (Statement s = connections.get(0).createStatement()) {
      for (String name : created) {
        s.execute("SELECT queue.drop_queue('" + name + "')");
      }
    }
    created.clear();
  }

  @Property
  @AddLifecycleHook(SeedInFailure.class)
  @AddLifecycleHook(SeedFromCommandLine.class)
  void queuesKeepTheirPromisesUnderAnyInterleaving(
      @ForAll("queueActions") ActionChain<QueuesAgainstModel> chain) throws SQLException {
    ModelRuns.withinBudget(propertyStarted);
    QueuesAgainstModel end =
        chain.withInvariant("tables match the model", QueuesAgainstModel::check).run();
    end.drainAndCheck();
  }

  @Provide
  Arbitrary<ActionChain<QueuesAgainstModel>> queueActions() {
    return ActionChain.startWith(() -> new QueuesAgainstModel(connections, created))
        .withAction(5, send())
        .withAction(2, sendBatch())
        .withAction(6, receive())
        .withAction(2, receiveInTransaction())
        .withAction(3, delete())
        .withAction(2, changeVisibility())
        .withAction(3, timePasses())
        .withAction(1, redrive())
        .withMaxTransformations(40);
  }

  private static Arbitrary<Integer> queue() {
    return Arbitraries.integers().between(0, 1);
  }

  private static Arbitrary<Integer> connection() {
    return Arbitraries.integers().between(0, 1);
  }

  private static Arbitrary<QueuesAgainstModel.Send> message() {
    return Combinators.combine(
            Arbitraries.of("a", "b", "c").injectNull(0.3), Arbitraries.of(0, 0, 0, 5, 30))
        .as(QueuesAgainstModel.Send::new);
  }

  private static Action.Independent<QueuesAgainstModel> send() {
    return () ->
        Combinators.combine(queue(), connection(), message())
            .as(
                (q, c, m) ->
                    Transformer.mutate(
                        "send to " + NAMES[q] + " on connection " + c + " " + m,
                        ModelRuns.sql(s -> s.send(q, c, m))));
  }

  private static Action.Independent<QueuesAgainstModel> sendBatch() {
    return () ->
        Combinators.combine(queue(), connection(), message().list().ofMinSize(1).ofMaxSize(4))
            .as(
                (q, c, ms) ->
                    Transformer.mutate(
                        "send batch to " + NAMES[q] + " on connection " + c + " " + ms,
                        ModelRuns.sql(s -> s.sendBatch(q, c, ms))));
  }

  private static Action.Independent<QueuesAgainstModel> receive() {
    return () ->
        Combinators.combine(
                queue(),
                connection(),
                Arbitraries.integers().between(1, 4),
                Arbitraries.of(0, 5, 60).injectNull(0.5))
            .as(
                (q, c, qty, vt) ->
                    Transformer.mutate(
                        "receive "
                            + qty
                            + " from "
                            + NAMES[q]
                            + " on connection "
                            + c
                            + " vt "
                            + vt,
                        ModelRuns.sql(s -> s.receive(q, c, qty, vt))));
  }

  private static Action.Independent<QueuesAgainstModel> receiveInTransaction() {
    return () ->
        Combinators.combine(
                queue(),
                connection(),
                Arbitraries.integers().between(1, 3),
                Arbitraries.integers().between(1, 3),
                Arbitraries.of(true, false),
                Arbitraries.of(true, false))
            .as(
                (q, a, qa, qb, del, commit) ->
                    Transformer.mutate(
                        String.format(
                            "in a transaction on connection %d: receive %d from %s; connection %d"
                                + " receives %d; %s%s",
                            a,
                            qa,
                            NAMES[q],
                            1 - a,
                            qb,
                            del ? "delete the first; " : "",
                            commit ? "commit" : "roll back"),
                        ModelRuns.sql(s -> s.receiveInTransaction(q, a, qa, qb, del, commit))));
  }

  private static Action.Dependent<QueuesAgainstModel> delete() {
    return state ->
        queue()
            .flatMap(
                q ->
                    Combinators.combine(connection(), someId(state, q))
                        .as(
                            (c, id) ->
                                Transformer.mutate(
                                    "delete " + id + " from " + NAMES[q] + " on connection " + c,
                                    ModelRuns.sql(s -> s.delete(q, c, id)))));
  }

  private static Action.Dependent<QueuesAgainstModel> changeVisibility() {
    return state ->
        queue()
            .flatMap(
                q ->
                    Combinators.combine(connection(), someId(state, q), Arbitraries.of(0, 10, 100))
                        .as(
                            (c, id, vt) ->
                                Transformer.mutate(
                                    "change visibility of "
                                        + id
                                        + " in "
                                        + NAMES[q]
                                        + " to "
                                        + vt
                                        + " s on connection "
                                        + c,
                                    ModelRuns.sql(s -> s.changeVisibility(q, c, id, vt)))));
  }

  /** An id a message of the queue had (current, deleted or dead-lettered), or one never used. */
  private static Arbitrary<Long> someId(QueuesAgainstModel state, int q) {
    List<Long> ids = state.knownIds(q);
    ids.add(999_999L);
    return Arbitraries.of(ids);
  }

  private static Action.Independent<QueuesAgainstModel> timePasses() {
    return () ->
        Arbitraries.of(1, 5, 10, 25, 70)
            .map(
                sec ->
                    Transformer.mutate(
                        sec + " s pass", (QueuesAgainstModel s) -> s.timePasses(sec)));
  }

  private static Action.Independent<QueuesAgainstModel> redrive() {
    return () ->
        Combinators.combine(queue(), connection())
            .as(
                (q, c) ->
                    Transformer.mutate(
                        "redrive the dead letters of " + NAMES[q] + " on connection " + c,
                        ModelRuns.sql(s -> s.redrive(q, c))));
  }
}
