package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention keeps a chain of runs that continued as new whole: it goes when its last run's
 * retention has passed, all at once, and not a run of it before. The sweep's clock is moved on.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ContinueAsNewRetentionTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void retentionRemovesAChainTogetherWhenItsLastRunIsDueAndNotBefore() throws Exception {
    Workflow<Integer, String> wf =
        Workflow.define("renew-kept", Integer.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("charge", () -> {});
                  if (in < 2) {
                    return ctx.continueAsNew(in + 1);
                  }
                  ctx.step().waitForEvent("end", String.class, Match.any(), Duration.ofMinutes(5));
                  return "ended";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started s = client.start("renew-kept", 0, StartOptions.NONE.withRetentionDays(30));
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> client.chain("renew-kept", s.runId()).size() == 3);
    List<Long> ids = client.chain("renew-kept", s.runId()).stream().map(RunInfo::runId).toList();
    long last = ids.get(2);
    // The chain's first runs ended long ago: their own retention has passed.
    try (Connection c = server.database().connect();
        PreparedStatement old =
            c.prepareStatement(
                "UPDATE queue.workflow_run SET completed_at = now() - interval '40 days',"
                    + " started_at = now() - interval '41 days' WHERE run_id = ANY (?)")) {
      old.setArray(1, c.createArrayOf("bigint", new Object[] {ids.get(0), ids.get(1)}));
      assertThat(old.executeUpdate()).isEqualTo(2);
    }
    // Its last run still runs: nothing of the chain goes, even a year on.
    assertThat(sweep(Instant.now().plus(Duration.ofDays(365)))).isZero();
    assertThat(existing(ids)).containsExactlyElementsOf(ids);

    client.signal("renew-kept", last, "end", "now");
    assertThat(client.awaitResult("renew-kept", s.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ended");
    assertThat(sweep(Instant.now().plus(Duration.ofDays(29)))).isZero();
    assertThat(existing(ids)).containsExactlyElementsOf(ids);

    assertThat(sweep(Instant.now().plus(Duration.ofDays(31)))).isEqualTo(3);
    assertThat(existing(ids)).isEmpty();
  }

  private static int sweep(Instant now) throws Exception {
    try (Connection c = server.database().connect();
        PreparedStatement ps = c.prepareStatement("SELECT queue.sweep_workflow_runs(1000, ?)")) {
      ps.setObject(1, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static List<Long> existing(List<Long> ids) throws Exception {
    Set<Long> found = new HashSet<>();
    try (Connection c = server.database().connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT run_id FROM queue.workflow_run WHERE run_id = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("bigint", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getLong(1));
        }
      }
    }
    return ids.stream().filter(found::contains).toList();
  }
}
