package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A step's labels in a test: a worker without them (over JDBC) hands the run to one that has them
 * (over HTTP), which runs the step and goes on with the run.
 */
class WorkerLabelsInTheKitTest {
  /** The pipeline as a worker named {@code worker} serves it: each step answers that name. */
  private static Workflow<Integer, String> pipeline(String worker) {
    return Workflow.define("pipeline", Integer.class, String.class)
        .run(
            (ctx, n) -> {
              String prep = ctx.step().run("prep", String.class, () -> worker);
              String train =
                  ctx.step()
                      .onWorkers(Map.of("gpu", "true"))
                      .run("train", String.class, () -> worker);
              return prep + "," + train;
            });
  }

  @Test
  void aStepNeedingLabelsMovesToTheWorkerThatHasThem() {
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      WorkflowClient client = kit.client();
      Worker cpu = pipeline("jdbc").serve(kit.jdbcWorkerOptions());
      Worker gpu = null;
      try {
        Started run = client.start("pipeline", 1);
        // Alone, the worker without the labels runs prep and hands train on: the run waits.
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .untilAsserted(
                () ->
                    assertThat(client.runs().blockers("pipeline", run.runId()))
                        .extracting(b -> b.kind())
                        .contains("no_worker_with_labels"));
        gpu = pipeline("gpu").serve(kit.workerOptions().labels(Map.of("gpu", "true")));
        assertThat(
                client
                    .runs()
                    .awaitResult("pipeline", run.runId(), String.class, Duration.ofSeconds(30)))
            .isEqualTo("jdbc,gpu");
      } finally {
        cpu.close();
        if (gpu != null) {
          gpu.close();
        }
      }
    }
  }
}
