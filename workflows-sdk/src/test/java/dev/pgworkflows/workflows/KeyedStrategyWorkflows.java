package dev.pgworkflows.workflows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Workflows whose concurrency limits carry a strategy, and one throttled, served by a worker JVM of
 * their own: each step's execution is recorded in a file ("workflow begin id", "workflow end id"),
 * so a test sees from the workers' side which runs ran, and how many at once.
 *
 * <ul>
 *   <li>{@code latest-wins}: one run per key, a new start cancels the running one; a run waits for
 *       "go" between its steps.
 *   <li>{@code singleton}: one run per key, a start while one runs is skipped; waits the same way.
 *   <li>{@code by-plan}: the key's limit comes from the input's {@code plan} (premium 2, free 1);
 *       its one step holds its slot for a second.
 *   <li>{@code paced}: throttled to five starts a second, two at once.
 * </ul>
 */
public final class KeyedStrategyWorkflows {
  private KeyedStrategyWorkflows() {}

  @SuppressWarnings("rawtypes")
  static Workflow<Map, String> waiting(String name, Concurrency concurrency, Path log) {
    return Workflow.define(name, Map.class, String.class)
        .concurrency(concurrency)
        .run(
            (ctx, in) -> {
              String id = String.valueOf(in.get("id"));
              ctx.step()
                  .run(
                      "begin",
                      String.class,
                      () -> CrashyWorkflow.record(log, name + " begin " + id));
              ctx.step().waitForEvent("go", Map.class, Match.any(), Duration.ofHours(1));
              ctx.step()
                  .run("end", String.class, () -> CrashyWorkflow.record(log, name + " end " + id));
              return id;
            });
  }

  @SuppressWarnings("rawtypes")
  static Workflow<Map, String> byPlan(Path log) {
    return Workflow.define("by-plan", Map.class, String.class)
        .concurrency(Concurrency.limit(1).limitFrom("$.plan", Map.of("premium", 2, "free", 1)))
        .run(
            (ctx, in) -> {
              String id = in.get("plan") + "-" + in.get("id");
              ctx.step()
                  .run(
                      "work",
                      String.class,
                      () -> {
                        CrashyWorkflow.record(log, "by-plan begin " + id);
                        Thread.sleep(1_000);
                        return CrashyWorkflow.record(log, "by-plan end " + id);
                      });
              return id;
            });
  }

  /** Five starts a second, two at once: each run records when its one step began. */
  @SuppressWarnings("rawtypes")
  static Workflow<Map, String> paced(Path log) {
    return Workflow.define("paced", Map.class, String.class)
        .throttle(Throttle.of(5, Duration.ofSeconds(1)).burst(2))
        .run(
            (ctx, in) ->
                ctx.step()
                    .run(
                        "begin",
                        String.class,
                        () ->
                            CrashyWorkflow.record(
                                log, "paced " + in.get("id") + " " + System.currentTimeMillis())));
  }

  /** Child process: serves the four workflows at {@code args[0]}, recording to {@code args[1]}. */
  public static void main(String[] args) throws Exception {
    Path log = Path.of(args[1]);
    WorkerOptions options =
        WorkerOptions.url(args[0]).pollWait(Duration.ofSeconds(1)).concurrency(8);
    for (Workflow<?, ?> w :
        List.of(
            waiting(
                "latest-wins",
                Concurrency.limit(1).strategy(ConcurrencyStrategy.CANCEL_IN_PROGRESS),
                log),
            waiting("singleton", Concurrency.limit(1).strategy(ConcurrencyStrategy.SKIP), log),
            byPlan(log),
            paced(log))) {
      w.serve(options);
    }
    Thread.sleep(Long.MAX_VALUE);
  }
}
