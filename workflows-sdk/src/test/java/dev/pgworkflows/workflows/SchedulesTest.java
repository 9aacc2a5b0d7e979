package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.SettableClock;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.RecordingProxy;
import dev.pgworkflows.workflows.testing.SpecRequests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Schedules from the SDK: a definition's schedules are registered by its worker as it starts and
 * changed when a worker starts with changed ones; {@code client.schedules()} makes, reads, changes,
 * pauses, resumes and deletes them; a tick's run reaches the body with its time.
 */
class SchedulesTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Report(String format, Instant scheduledAt) {}

  private static Workflow<Report, String> report(Schedule... schedules) {
    Workflow.Builder<Report, String> b = Workflow.define("report", Report.class, String.class);
    for (Schedule s : schedules) {
      b = b.schedule(s);
    }
    return b.run((ctx, in) -> in.format() + "@" + in.scheduledAt());
  }

  @Test
  void aWorkerRegistersItsDefinitionsSchedulesAndAChangedDefinitionChangesThem() {
    Schedule weekdays =
        Schedule.cron("0 9 * * MON-FRI")
            .zone("Europe/Berlin")
            .input(new Report("pdf", null))
            .catchUp(Schedule.CatchUp.LATEST);
    Worker first =
        server.serve(report(weekdays, Schedule.cron("0 2 1 * *").name("report-monthly")));
    Schedules schedules = server.client().schedules();
    ScheduleInfo made = schedules.get("report").orElseThrow();
    assertThat(made.workflow()).isEqualTo("report");
    assertThat(made.cron()).isEqualTo("0 9 * * MON-FRI");
    assertThat(made.zone()).isEqualTo("Europe/Berlin");
    assertThat(made.catchUp()).isEqualTo(Schedule.CatchUp.LATEST);
    assertThat(made.input().get("format").asText()).isEqualTo("pdf");
    assertThat(made.source()).isEqualTo("code");
    assertThat(made.nextTick()).isAfter(Instant.now());
    assertThat(schedules.get("report-monthly").orElseThrow().source()).isEqualTo("code");
    first.close();

    schedules.pause("report");
    server.serve(
        report(
            weekdays.zone("America/New_York"), Schedule.cron("0 2 1 * *").name("report-monthly")));
    ScheduleInfo changed = schedules.get("report").orElseThrow();
    assertThat(changed.zone()).isEqualTo("America/New_York");
    assertThat(changed.paused()).as("as the operator left it").isTrue();
    assertThat(changed.updatedAt()).isAfter(made.updatedAt());
    assertThat(schedules.get("report-monthly").orElseThrow().updatedAt())
        .as("unchanged, untouched")
        .isEqualTo(schedules.get("report-monthly").orElseThrow().createdAt());

    assertThat(schedules.delete("report")).isTrue();
    assertThat(schedules.delete("report-monthly")).isTrue();
  }

  @Test
  void theClientMakesReadsChangesPausesResumesAndDeletesSchedules() {
    Schedules schedules = server.client().schedules();
    ScheduleInfo made =
        schedules.create(
            "billing",
            Schedule.cron("0 3 * * *").name("nightly-billing").input(Map.of("dry", false)));
    assertThat(made.name()).isEqualTo("nightly-billing");
    assertThat(made.source()).isEqualTo("api");
    assertThat(made.catchUp()).isEqualTo(Schedule.CatchUp.SKIP);
    assertThat(schedules.list()).extracting(ScheduleInfo::name).contains("nightly-billing");

    ScheduleInfo changed =
        schedules.update(
            "billing",
            Schedule.cron("0 4 * * *")
                .name("nightly-billing")
                .catchUp(Schedule.CatchUp.ALL)
                .maxCatchUp(7));
    assertThat(changed.cron()).isEqualTo("0 4 * * *");
    assertThat(changed.maxCatchUp()).isEqualTo(7);
    assertThat(changed.input()).as("replaced: none given").isNull();

    assertThat(schedules.pause("nightly-billing").paused()).isTrue();
    assertThat(schedules.resume("nightly-billing").paused()).isFalse();

    assertThatThrownBy(
            () -> schedules.create("billing", Schedule.cron("0 3 * * *").name("nightly-billing")))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(409));
    assertThatThrownBy(() -> schedules.create("billing", Schedule.cron("0 3 * *").name("broken")))
        .isInstanceOfSatisfying(
            ApiException.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.getMessage()).contains("cron", "4 parts");
            });
    assertThat(schedules.get("broken")).isEmpty();

    assertThat(schedules.delete("nightly-billing")).isTrue();
    assertThat(schedules.delete("nightly-billing")).isFalse();
    assertThat(schedules.get("nightly-billing")).isEmpty();
  }

  @Test
  void everyScheduleRequestTheSdkSendsMatchesTheSpec() throws Exception {
    try (RecordingProxy proxy = new RecordingProxy(server.url())) {
      Schedules schedules = WorkflowClient.connect(proxy.url()).schedules();
      server.serve(
          Workflow.define("spec-checked", Report.class, String.class)
              .schedule(
                  Schedule.cron("0 6 * * *")
                      .zone("Asia/Tokyo")
                      .input(new Report("txt", null))
                      .catchUp(Schedule.CatchUp.ALL)
                      .maxCatchUp(10))
              .run((ctx, in) -> "x"),
          WorkerOptions.url(proxy.url()).pollWait(Duration.ofSeconds(1)));
      schedules.create("spec-checked", Schedule.cron("0 7 * * *").name("spec-api"));
      schedules.update("spec-checked", Schedule.cron("0 8 * * *").name("spec-api"));
      schedules.list();
      schedules.get("spec-api");
      schedules.pause("spec-api");
      schedules.resume("spec-api");
      schedules.delete("spec-api");
      schedules.delete("spec-checked");

      Set<String> routes = new TreeSet<>();
      List<String> violations = new ArrayList<>();
      for (RecordingProxy.Recorded r : proxy.requests()) {
        routes.add(SpecRequests.route(r));
        for (String v : SpecRequests.violations(r)) {
          violations.add(r.method() + " " + r.target() + " " + r.body() + "\n    " + v);
        }
      }
      assertThat(violations).as("requests that do not match openapi.yaml").isEmpty();
      assertThat(routes)
          .contains(
              "POST /v1/workflows/{name}/schedules",
              "POST /v1/schedules",
              "PUT /v1/schedules/{name}",
              "GET /v1/schedules",
              "GET /v1/schedules/{name}",
              "POST /v1/schedules/{name}/pause",
              "POST /v1/schedules/{name}/resume",
              "DELETE /v1/schedules/{name}");
    }
  }

  @Test
  void aWorkerWhoseScheduleNameIsTakenByAnApiScheduleDoesNotStart() {
    Schedules schedules = server.client().schedules();
    schedules.create("other", Schedule.cron("0 3 * * *").name("taken"));
    Workflow<Report, String> wf =
        Workflow.define("taker", Report.class, String.class)
            .schedule(Schedule.cron("0 5 * * *").name("taken"))
            .run((ctx, in) -> "x");
    assertThatThrownBy(() -> server.serve(wf))
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(409));
    assertThat(schedules.get("taken").orElseThrow().workflow()).isEqualTo("other");
    assertThatThrownBy(
            () ->
                Workflow.define("twice", Report.class, String.class)
                    .schedule(Schedule.cron("0 5 * * *"))
                    .schedule(Schedule.cron("0 6 * * *")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("two schedules named twice");
    schedules.delete("taken");
  }

  @Test
  void aTicksRunReachesTheBodyWithTheTickInItsInput() {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-02T10:30:00Z"));
    try (TestServer ticking =
        TestServer.start(
            TestDatabase.fresh(), Map.of("WORKFLOWS_SCHEDULE_INTERVAL_MS", "20"), clock)) {
      Worker worker =
          report(Schedule.cron("0 11 * * *").input(new Report("csv", null)))
              .serve(WorkerOptions.url(ticking.url()).pollWait(Duration.ofSeconds(1)));
      try {
        WorkflowClient client = WorkflowClient.connect(ticking.url());
        clock.set(Instant.parse("2026-03-02T11:00:05Z"));
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        List<RunInfo> runs = client.runs().list("report", null, null, 10).runs();
        while (runs.isEmpty() && System.nanoTime() < deadline) {
          Thread.sleep(20);
          runs = client.runs().list("report", null, null, 10).runs();
        }
        assertThat(runs).hasSize(1);
        assertThat(
                client
                    .runs()
                    .awaitResult(
                        "report", runs.get(0).runId(), String.class, Duration.ofSeconds(30)))
            .isEqualTo("csv@2026-03-02T11:00:00Z");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      } finally {
        worker.close();
      }
    }
  }
}
