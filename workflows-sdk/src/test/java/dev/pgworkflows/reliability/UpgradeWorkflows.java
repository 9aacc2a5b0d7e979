package dev.pgworkflows.reliability;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.RunStream;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowContext;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The upgrade test's workflows, one per state a run can be in when its server is replaced by a
 * newer one: asleep, waiting for a signal, retrying a failing step, queued behind its concurrency
 * key, started with a delay, due from a schedule, paused by an operator, half-way through writing a
 * stream, and inside a step. Each answer shows the path the run took.
 */
final class UpgradeWorkflows {
  static final Duration WAIT = Duration.ofMinutes(10);

  private UpgradeWorkflows() {}

  /** Step, a 10 s sleep, step. */
  static final Workflow<String, String> SLEEPING =
      stepSleepStep("up-sleeping", Duration.ofSeconds(10), "-slept");

  /** Waits for the signal {@code go} and answers with its payload. */
  static final Workflow<String, String> SIGNALLED =
      Workflow.define("up-signalled", String.class, String.class).run(UpgradeWorkflows::awaitGo);

  /** A step that fails until the instant its input names (epoch ms), retried every 3 s. */
  static final Workflow<Long, String> RETRYING =
      Workflow.define("up-retrying", Long.class, String.class)
          .run(
              (ctx, failUntil) ->
                  ctx.step()
                      .run(
                          "flaky",
                          String.class,
                          () -> {
                            if (Instant.now().toEpochMilli() < failUntil) {
                              throw new IllegalStateException("not yet");
                            }
                            return "recovered";
                          },
                          Retry.fixed(20, Duration.ofSeconds(3))));

  /** One run per concurrency key at a time; each waits for the signal {@code go}. */
  static final Workflow<String, String> KEYED =
      Workflow.define("up-keyed", String.class, String.class)
          .concurrency(1)
          .run(UpgradeWorkflows::awaitGo);

  /** One step; started with a delay that ends after the upgrade. */
  static final Workflow<String, String> DELAYED =
      Workflow.define("up-delayed", String.class, String.class)
          .run((ctx, in) -> ctx.step().run("only", String.class, () -> in + "-ran"));

  /** One step; started by a schedule made under the old server, ticking every minute. */
  static final Workflow<JsonNode, String> SCHEDULED =
      Workflow.define("up-scheduled", JsonNode.class, String.class)
          .run((ctx, in) -> ctx.step().run("tick", String.class, () -> "ticked"));

  /** Step, a 3 s sleep, step: paused by an operator during the sleep. */
  static final Workflow<String, String> PAUSED =
      stepSleepStep("up-paused", Duration.ofSeconds(3), "-resumed");

  /** Writes 1 and 2 to its stream, waits for {@code more}, writes 3. */
  static final Workflow<String, String> STREAMING =
      Workflow.define("up-streaming", String.class, String.class)
          .run(
              (ctx, in) -> {
                RunStream progress = ctx.stream("progress");
                ctx.step()
                    .run(
                        "first",
                        () -> {
                          progress.write(1);
                          progress.write(2);
                        });
                ctx.step().waitForEvent("more", String.class, Match.any(), WAIT);
                ctx.step().run("second", () -> progress.write(3));
                progress.close();
                return in + "-streamed";
              });

  /** A step that takes 8 s: the server is replaced while it runs. */
  static final Workflow<String, String> IN_STEP =
      Workflow.define("up-in-step", String.class, String.class)
          .run(
              (ctx, in) ->
                  ctx.step()
                      .run(
                          "slow",
                          String.class,
                          () -> {
                            Thread.sleep(8_000);
                            return in + "-done";
                          }));

  /** Waits for the signal {@code go}; answers the input and the signal's payload. */
  private static String awaitGo(WorkflowContext ctx, String in) {
    return in
        + "-"
        + ctx.step().waitForEvent("go", String.class, Match.any(), WAIT).orElse("timed out");
  }

  private static Workflow<String, String> stepSleepStep(String name, Duration nap, String suffix) {
    return Workflow.define(name, String.class, String.class)
        .run(
            (ctx, in) -> {
              String a = ctx.step().run("before", String.class, () -> in + "-a");
              ctx.step().sleep("nap", nap);
              return ctx.step().run("after", String.class, () -> a + suffix);
            });
  }

  static final List<Workflow<?, ?>> ALL =
      List.of(SLEEPING, SIGNALLED, RETRYING, KEYED, DELAYED, SCHEDULED, PAUSED, STREAMING, IN_STEP);
}
