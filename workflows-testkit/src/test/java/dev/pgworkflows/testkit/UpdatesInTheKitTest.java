package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.TypeRef;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Updates in a test: sent with the kit's application client, answered by the worker's handlers
 * while the run waits a week, which {@code advanceTime} then passes; a run whose journal holds
 * answered updates replays clean in the replay check.
 */
class UpdatesInTheKitTest {
  private static final TypeRef<List<String>> NAMES = new TypeRef<>() {};

  private static final Workflow<String, Integer> GUESTS =
      Workflow.define("guest-list", String.class, Integer.class)
          .onUpdate(
              "invite",
              String.class,
              (ctx, guest) -> {
                List<String> guests = ctx.state().get("guests", NAMES);
                guests = guests == null ? new ArrayList<>() : new ArrayList<>(guests);
                guests.add(guest);
                ctx.state().put("guests", guests);
                return guests.size();
              })
          .run(
              (ctx, party) -> {
                ctx.step().waitForEvent("closed", Map.class, Match.any(), Duration.ofDays(7));
                List<String> guests = ctx.state().get("guests", NAMES);
                return guests == null ? 0 : guests.size();
              });

  @Test
  void updatesAreAnsweredWhileARunWaitsAWeekAndItsJournalReplaysClean() throws Exception {
    Path exports = Files.createTempDirectory("updates-export");
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = GUESTS.serve(kit.workerOptions());
      try {
        WorkflowClient client = kit.client();
        long run = client.start("guest-list", "summer").runId();
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get("guest-list", run).waitingFor() != null);
        assertThat(client.update("guest-list", run, "invite", "ada", Integer.class)).isEqualTo(1);
        assertThat(client.update("guest-list", run, "invite", "grace", Integer.class)).isEqualTo(2);

        Exports.write(kit, "guest-list", exports);
        ReplayReport report = ReplayCheck.of(GUESTS).against(exports);
        assertThat(report.isCompatible()).as(report.toString()).isTrue();
        assertThat(report.checked()).containsExactly(run);

        kit.advanceTime(Duration.ofDays(7));
        assertThat(
                client.runs().awaitResult("guest-list", run, Integer.class, Duration.ofSeconds(20)))
            .isEqualTo(2);
      } finally {
        worker.close();
      }
    }
  }
}
