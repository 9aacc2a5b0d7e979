package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.Schedule;
import dev.pgworkflows.workflows.ScheduleInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A definition's schedule in the kit: the kit's worker, whose token has only scope {@code worker},
 * registers it as it starts; the application's client reads it; only an operator's pauses it; the
 * kit runs its next tick on demand, and the worker gets the tick in its input.
 */
class CodeSchedulesInTheKitTest {
  record Tick(String kind, Instant scheduledAt) {}

  @Test
  void aCodeScheduleIsRegisteredByTheKitsWorkerAndItsNextTickRunsOnDemand() {
    Workflow<String, String> digest =
        Workflow.define("digest", String.class, String.class)
            .schedule(Schedule.cron("0 8 * * MON").zone("Europe/Paris"))
            .run((ctx, in) -> in);
    Workflow<Tick, String> nightly =
        Workflow.define("nightly", Tick.class, String.class)
            .schedule(Schedule.cron("0 3 * * *").input(new Tick("full", null)))
            .run((ctx, in) -> in.kind() + " at " + in.scheduledAt());
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = digest.serve(kit.workerOptions());
      Worker nightlyWorker = nightly.serve(kit.workerOptions());
      try {
        Instant tick = kit.client().schedules().get("nightly").orElseThrow().nextTick();
        long run = kit.runSchedule("nightly");
        assertThat(
                kit.client()
                    .runs()
                    .awaitResult("nightly", run, String.class, Duration.ofSeconds(30)))
            .isEqualTo("full at " + tick);
        assertThat(kit.client().schedules().get("nightly").orElseThrow().nextTick())
            .isEqualTo(tick.plus(Duration.ofDays(1)));

        ScheduleInfo s = kit.client().schedules().get("digest").orElseThrow();
        assertThat(s.source()).isEqualTo("code");
        assertThat(s.cron()).isEqualTo("0 8 * * MON");
        assertThat(s.zone()).isEqualTo("Europe/Paris");
        assertThat(s.nextTick()).isNotNull();

        assertThatThrownBy(() -> kit.client().schedules().pause("digest"))
            .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(403));
        assertThat(kit.client(WorkflowTestKit.Role.ADMIN).schedules().pause("digest").paused())
            .isTrue();
      } finally {
        worker.close();
        nightlyWorker.close();
      }
    }
  }
}
