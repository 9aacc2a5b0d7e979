package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.Labels;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Workflows that choose their workers, served by a worker JVM of their own named {@code args[1]}
 * with the labels {@code args[2]} ({@code name=value,...}, blank for none). Each step answers the
 * name of the worker that ran it, so a run's journal says where each step ran.
 *
 * <ul>
 *   <li>{@code render}: only workers with {@code gpu=true} take its runs.
 *   <li>{@code pipeline}: {@code prep} anywhere, {@code train} on a worker with {@code gpu=true},
 *       {@code report} anywhere.
 *   <li>{@code cached}: sticky; six steps a second apart.
 * </ul>
 */
public final class LabelledWorkflows {
  private LabelledWorkflows() {}

  static final Workflow<Integer, String> RENDER =
      Workflow.define("render", Integer.class, String.class)
          .routing(Routing.workers().require("gpu", "true"))
          .run((ctx, frame) -> ctx.step().run("draw", String.class, () -> name()));

  static final Workflow<Integer, String> PIPELINE =
      Workflow.define("pipeline", Integer.class, String.class)
          .run(
              (ctx, n) -> {
                String prep = ctx.step().run("prep", String.class, () -> name());
                String train =
                    ctx.step()
                        .onWorkers(Map.of("gpu", "true"))
                        .run("train", String.class, () -> name());
                String report = ctx.step().run("report", String.class, () -> name());
                return prep + "," + train + "," + report;
              });

  static final Workflow<Integer, String> CACHED =
      Workflow.define("cached", Integer.class, String.class)
          .routing(Routing.workers().sticky())
          .run(
              (ctx, n) -> {
                StringBuilder ran = new StringBuilder();
                for (int i = 1; i <= 6; i++) {
                  ran.append(ctx.step().run("s" + i, String.class, () -> name())).append(',');
                  ctx.step().sleep("pause" + i, Duration.ofSeconds(1));
                }
                return ran.toString();
              });

  private static String name() {
    return System.getProperty("worker.name");
  }

  /** Child process: serves the three workflows at {@code args[0]} as {@code args[1]}. */
  public static void main(String[] args) throws Exception {
    System.setProperty("worker.name", args[1]);
    WorkerOptions options =
        WorkerOptions.url(args[0])
            .pollWait(Duration.ofSeconds(1))
            .concurrency(4)
            .labels(Labels.parse("labels", args.length > 2 ? args[2] : ""));
    for (Workflow<?, ?> w : List.of(RENDER, PIPELINE, CACHED)) {
      w.serve(options);
    }
    Thread.sleep(Long.MAX_VALUE);
  }
}
