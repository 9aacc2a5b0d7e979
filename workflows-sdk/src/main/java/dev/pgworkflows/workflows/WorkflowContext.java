package dev.pgworkflows.workflows;

import java.time.Instant;
import java.util.Random;
import java.util.UUID;

/** What a running workflow body can see of its run. */
public interface WorkflowContext {
  /** The durable verbs: run, sleep, waitForEvent. */
  StepContext step();

  String workflow();

  long runId();

  int version();

  /** The attempt of the step about to run or running, from 1. */
  int attempt();

  /** Set when the run is cancelled while this worker holds it. */
  Cancellation cancellation();

  /**
   * The time on the worker's clock when the run first reached this call; a replay returns the same
   * instant. Journaled once, as the run's row {@code __now.<n>} (n counts the calls from 1).
   */
  Instant now();

  /** A random UUID drawn when the run first reached this call; a replay returns the same one. */
  UUID randomUUID();

  /**
   * A generator seeded once per run (the seed journaled as {@code __seed}): a replay draws the same
   * numbers as long as the body draws in the same order. Use it outside steps only.
   */
  Random random();

  /**
   * Whether the run takes the code added under {@code changeId}: true for a run that reaches this
   * point under the code that calls it (journaled as {@code __patch.<changeId>}), false for a run
   * that had passed this point before the call existed, whose journal goes on past it without the
   * marker. Keep the old branch until no such run is left.
   */
  boolean patched(String changeId);

  /**
   * The run's stream named {@code name}, to write output to as the run goes (progress, tokens):
   * from the body or from a step's code. See {@link RunStream} for what retries and replays do.
   */
  RunStream stream(String name);

  /**
   * Ends this run and starts its successor with {@code input} and a fresh journal, in one
   * transaction: the same workflow at the newest version a worker serves (as a new start), with
   * this run's retention, concurrency key, priority, deadline and an operator's pause, and the
   * signals no wait took yet; the two are linked ({@link RunInfo#continuedFrom()}, {@link
   * RunInfo#continuedTo()}) and the idempotency key moves to the successor. The step completion
   * this run still holds is journaled in that transaction. The call does not return: the body
   * unwinds (typed so that a body may {@code return ctx.continueAsNew(next)}). A worker that dies
   * before the call's write commits leaves the run to be replayed, which calls it again; one that
   * dies after leaves only the successor to run. Only from the body itself: inside a step it throws
   * {@link IllegalStateException}.
   */
  <T> T continueAsNew(Object input);

  /**
   * The run's state: a small map of keys to JSON values, readable from outside while the run is in
   * flight. Usable from the body and from step code; see {@link RunState} for when changes become
   * visible.
   */
  RunState state();

  /**
   * The run's search attributes, which queries over runs select by ({@link Runs#search}). Only from
   * the body itself: inside a step it throws {@link IllegalStateException}.
   */
  Attributes attributes();
}
