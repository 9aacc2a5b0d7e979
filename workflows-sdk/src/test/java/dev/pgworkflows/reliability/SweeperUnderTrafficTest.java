package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The sweeper running every second under live traffic never touches a running run or its messages.
 */
@Tag("reliability")
class SweeperUnderTrafficTest {
  /** The message table of workflow "old"'s queue. */
  private static final String OLD_RUNS = "\"q_" + Names.workflowQueue("old") + "\"";

  @Test
  void expiredRunsGoAndLiveRunsAreUntouched() throws Exception {
    try (TestServer server = TestServer.start(Map.of("WORKFLOWS_SWEEPER_INTERVAL_MS", "1000"))) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      try (Connection c = server.database().connect();
          Statement s = c.createStatement()) {
        // 300 runs that finished long ago, and 50 running ones that started long ago.
        s.execute(
            "SELECT queue.workflow_start('old', '{}'::jsonb, 1, NULL, 1) FROM generate_series(1, 350)");
        s.execute(
            "UPDATE queue.workflow_run SET status = 'completed', current_msg_id = NULL,"
                + " completed_at = now() - interval '10 days' WHERE workflow_name = 'old' AND run_id <= 300");
        s.execute("DELETE FROM queue." + OLD_RUNS + " WHERE group_id::bigint <= 300");
        s.execute(
            "UPDATE queue.workflow_run SET started_at = now() - interval '1 year' WHERE run_id > 300");
      }
      Workflow<Integer, Integer> live =
          Workflow.define("live", Integer.class, Integer.class)
              .run(
                  (ctx, n) -> {
                    ctx.step().run("a", Integer.class, () -> n);
                    ctx.step().sleep("pause", Duration.ofMillis(300));
                    return ctx.step().run("b", Integer.class, () -> n + 1);
                  });
      Worker worker = live.serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)));
      try {
        List<Long> runs = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
          runs.add(client.start("live", i).runId());
          Thread.sleep(20);
        }
        for (long id : runs) {
          assertThat(client.runs().awaitResult("live", id, Integer.class, Duration.ofSeconds(60)))
              .isNotNull();
          assertThat(client.runs().steps("live", id))
              .extracting(StepInfo::name)
              .containsExactly("a", "pause", "b");
        }
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> count(server, "completed") == 0);
        assertThat(count(server, "running")).isEqualTo(50);
        assertThat(client.runs().get("live", runs.get(0)).status()).isEqualTo(RunStatus.COMPLETED);
        try (Connection c = server.database().connect();
            Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT count(*) FROM queue." + OLD_RUNS)) {
          rs.next();
          assertThat(rs.getLong(1)).as("the running runs' messages").isEqualTo(50);
        }
      } finally {
        worker.close();
      }
    }
  }

  private static long count(TestServer server, String status) throws Exception {
    try (Connection c = server.database().connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'old' AND status = '"
                    + status
                    + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
