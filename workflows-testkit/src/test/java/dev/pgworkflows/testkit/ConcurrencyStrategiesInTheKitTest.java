package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.Admission;
import dev.pgworkflows.workflows.Concurrency;
import dev.pgworkflows.workflows.ConcurrencyStrategy;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.WorkflowSql;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A definition's concurrency strategy in a test: its worker sets it on the kit's server, and starts
 * over HTTP and in the caller's transaction answer what it made of them.
 */
class ConcurrencyStrategiesInTheKitTest {
  private static final Workflow<String, String> DEPLOY =
      Workflow.define("deploy", String.class, String.class)
          .concurrency(Concurrency.limit(1).strategy(ConcurrencyStrategy.CANCEL_IN_PROGRESS))
          .run(
              (ctx, commit) -> {
                ctx.step().waitForEvent("approved", Map.class, Match.any(), Duration.ofDays(1));
                return commit;
              });

  @Test
  void aNewerDeployOfABranchCancelsTheOneInProgress() throws Exception {
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = DEPLOY.serve(kit.workerOptions());
      try {
        WorkflowClient client = kit.client();
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.workflows().concurrency("deploy").isPresent());
        StartOptions main = StartOptions.builder().concurrencyKey("main").build();
        Started first = client.start(DEPLOY, "c1", main);
        Started second;
        try (Connection c = kit.dataSource().getConnection()) {
          second = WorkflowSql.start(c, DEPLOY, "c2", main);
        }
        assertThat(second.admission()).isEqualTo(Admission.STARTED);
        assertThat(second.cancelledRuns()).containsExactly(first.runId());
        assertThat(client.runs().get("deploy", first.runId()).status())
            .isEqualTo(RunStatus.CANCELLED);
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get("deploy", second.runId()).waitingFor() != null);
        client.signal("deploy", second.runId(), "approved", Map.of());
        assertThat(
                client
                    .runs()
                    .awaitResult("deploy", second.runId(), String.class, Duration.ofSeconds(20)))
            .isEqualTo("c2");
      } finally {
        worker.close();
      }
    }
  }
}
