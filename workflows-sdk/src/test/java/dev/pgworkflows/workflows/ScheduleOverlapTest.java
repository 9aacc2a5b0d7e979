package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A schedule's overlap policy and backfills through a real server and worker: a backfill of 30
 * ticks under buffer_all gives 30 runs, one at a time, each with its tick; failed runs in a row
 * pause a schedule; a backfill too long or of no tick is refused and starts nothing.
 */
class ScheduleOverlapTest {
  @RegisterExtension
  static final LiveServer server = LiveServer.with("WORKFLOWS_SCHEDULE_INTERVAL_MS", "100");

  record Tick(Instant scheduledAt) {}

  /** Each run waits for "done", then answers its tick, or fails when told to. */
  private static final Workflow<Tick, String> HOURLY =
      Workflow.define("hourly", Tick.class, String.class)
          .run(
              (ctx, in) -> {
                Map<?, ?> how =
                    ctx.step()
                        .waitForEvent("done", Map.class, Match.any(), Duration.ofHours(1))
                        .orElseThrow();
                if (Boolean.TRUE.equals(how.get("fail"))) {
                  throw new IllegalStateException("told to fail");
                }
                return in.scheduledAt().toString();
              });

  private static List<RunInfo> running(WorkflowClient client) {
    return client.runs().list("hourly", RunStatus.RUNNING, null, 100).runs();
  }

  @Test
  void aBackfillOfThirtyTicksUnderBufferAllGivesThirtyRunsOneAtATime() {
    WorkflowClient client = server.client();
    server.serve(HOURLY);
    client
        .schedules()
        .create(
            "hourly",
            Schedule.cron("0 * * * *")
                .name("hourly-buffered")
                .overlap(Schedule.Overlap.BUFFER_ALL));
    Instant from = Instant.parse("2026-11-01T00:00:00Z");
    List<BackfillTick> ticks =
        client.schedules().backfill("hourly-buffered", from, from.plus(Duration.ofHours(30)));
    assertThat(ticks).hasSize(30);
    assertThat(ticks.get(0).outcome()).isEqualTo("started");
    assertThat(ticks.subList(1, 30)).allSatisfy(t -> assertThat(t.outcome()).isEqualTo("buffered"));
    assertThat(client.schedules().get("hourly-buffered").orElseThrow().buffered()).isEqualTo(29);

    for (int i = 0; i < 30; i++) {
      List<RunInfo> now =
          Awaitility.await()
              .atMost(30, TimeUnit.SECONDS)
              .until(() -> running(client), r -> r.size() == 1);
      long run = now.get(0).runId();
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("hourly", run).waitingFor() != null);
      assertThat(running(client)).hasSize(1);
      client.signal("hourly", run, "done", Map.of());
      assertThat(client.runs().awaitResult("hourly", run, String.class, Duration.ofSeconds(30)))
          .isEqualTo(from.plus(Duration.ofHours(i)).toString());
    }
    assertThat(client.runs().list("hourly", null, null, 100).runs()).hasSize(30);
    assertThat(client.schedules().get("hourly-buffered").orElseThrow().buffered()).isZero();
    // A tick run before is its run again, not another.
    assertThat(client.schedules().backfill("hourly-buffered", from, from.plusSeconds(1)))
        .singleElement()
        .satisfies(t -> assertThat(t.created()).isFalse());
    assertThat(client.runs().list("hourly", null, null, 100).runs()).hasSize(30);
  }

  @Test
  void failedRunsInARowPauseTheScheduleAndABadBackfillChangesNothing() {
    WorkflowClient client = server.client();
    server.serve(HOURLY);
    client
        .schedules()
        .create("hourly", Schedule.cron("0 * * * *").name("hourly-fragile").pauseAfterFailures(2));
    Instant from = Instant.parse("2026-10-01T00:00:00Z");
    for (int i = 0; i < 2; i++) {
      long run =
          client
              .schedules()
              .backfill(
                  "hourly-fragile",
                  from.plus(Duration.ofHours(i)),
                  from.plus(Duration.ofHours(i + 1)))
              .get(0)
              .runId();
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("hourly", run).waitingFor() != null);
      client.signal("hourly", run, "done", Map.of("fail", true));
      Awaitility.await()
          .atMost(30, TimeUnit.SECONDS)
          .until(() -> client.runs().get("hourly", run).status() == RunStatus.FAILED);
    }
    // The failures are counted as the next tick comes: a backfill's tick comes now.
    client
        .schedules()
        .backfill("hourly-fragile", from.plus(Duration.ofHours(2)), from.plus(Duration.ofHours(3)));
    ScheduleInfo s = client.schedules().get("hourly-fragile").orElseThrow();
    assertThat(s.failuresInRow()).isEqualTo(2);
    assertThat(s.pauseAfterFailures()).isEqualTo(2);
    assertThat(s.paused()).isTrue();

    int runs = client.runs().list("hourly", null, null, 100).runs().size();
    assertThatThrownBy(
            () ->
                client
                    .schedules()
                    .backfill("hourly-fragile", from, from.plus(Duration.ofDays(3650))))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("more than 1000 ticks");
    assertThatThrownBy(
            () ->
                client
                    .schedules()
                    .backfill("hourly-fragile", from.plusSeconds(60), from.plusSeconds(120)))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("holds no tick");
    assertThatThrownBy(() -> client.schedules().backfill("nobody", from, from.plusSeconds(3600)))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("does not exist");
    assertThat(client.runs().list("hourly", null, null, 100).runs()).hasSize(runs);
  }
}
