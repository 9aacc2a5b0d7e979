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
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention takes the ended runs of a chain that continued as new one by one, each on its own
 * retention, except the first (the id callers hold), which stays while the chain goes on and goes
 * with the last run once that one's retention has passed. The sweep's clock is moved on.
 */
class ContinueAsNewRetentionTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void retentionFreesARunningChainsMiddleRunsAndKeepsItsFirstUntilTheLastEndsAndIsDue()
      throws Exception {
    Workflow<Integer, String> wf =
        Workflow.define("renew-kept", Integer.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("charge", () -> {});
                  if (in < 3) {
                    return ctx.continueAsNew(in + 1);
                  }
                  ctx.step().waitForEvent("end", String.class, Match.any(), Duration.ofMinutes(5));
                  return "ended";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started s = client.start("renew-kept", 0, StartOptions.builder().retentionDays(30).build());
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> client.runs().chain("renew-kept", s.runId()).size() == 4);
    List<Long> ids =
        client.runs().chain("renew-kept", s.runId()).stream().map(RunInfo::runId).toList();
    long first = ids.get(0);
    long last = ids.get(3);
    // The chain's first three runs ended long ago: their own retention has passed.
    try (Connection c = server.database().connect();
        PreparedStatement old =
            c.prepareStatement(
                "UPDATE queue.workflow_run SET completed_at = now() - interval '40 days',"
                    + " started_at = now() - interval '41 days' WHERE run_id = ANY (?)")) {
      old.setArray(1, c.createArrayOf("bigint", new Object[] {first, ids.get(1), ids.get(2)}));
      assertThat(old.executeUpdate()).isEqualTo(3);
    }
    // The middle runs go, one run per unit of the sweep's limit; the first and the running last
    // stay, however long the chain goes on.
    assertThat(sweep(Instant.now(), 1)).isEqualTo(1);
    assertThat(existing(ids)).containsExactly(first, ids.get(2), last);
    assertThat(sweep(Instant.now().plus(Duration.ofDays(365)), 1000)).isEqualTo(1);
    assertThat(existing(ids)).containsExactly(first, last);

    // What remains is listed; the first run's id still reaches the running last one.
    assertThat(client.runs().chain("renew-kept", first).stream().map(RunInfo::runId).toList())
        .containsExactly(first, last);
    assertThat(client.runs().chain("renew-kept", last).stream().map(RunInfo::runId).toList())
        .containsExactly(first, last);
    assertThat(client.runs().chainLast("renew-kept", first).runId()).isEqualTo(last);
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(() -> client.runs().get("renew-kept", last).waitingFor() != null);
    client.signal("renew-kept", first, "end", "now");
    assertThat(client.runs().awaitResult("renew-kept", first, String.class, Duration.ofSeconds(30)))
        .isEqualTo("ended");

    assertThat(sweep(Instant.now().plus(Duration.ofDays(29)), 1000)).isZero();
    assertThat(existing(ids)).containsExactly(first, last);
    // The last run's retention has passed: it takes the first with it.
    assertThat(sweep(Instant.now().plus(Duration.ofDays(31)), 1000)).isEqualTo(2);
    assertThat(existing(ids)).isEmpty();
  }

  private static int sweep(Instant now, int limit) throws Exception {
    try (Connection c = server.database().connect();
        PreparedStatement ps = c.prepareStatement("SELECT queue.sweep_workflow_runs(?, ?)")) {
      ps.setInt(1, limit);
      ps.setObject(2, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
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
