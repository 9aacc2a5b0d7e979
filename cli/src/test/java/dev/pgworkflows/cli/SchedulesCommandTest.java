package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw schedules}: lists schedules with their next tick, overlap policy and failures; {@code
 * pgw schedules backfill} runs a past range under the policy, and a range too long exits non-zero
 * naming the field and starts nothing.
 */
class SchedulesCommandTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void schedulesAreListedAndAPastRangeIsBackfilled() {
    server
        .api()
        .post(
            "/v1/schedules",
            Map.of(
                "name",
                "nightly",
                "workflow",
                "billing",
                "cron",
                "0 3 * * *",
                "overlap",
                "skip",
                "pauseAfterFailures",
                3));
    Cli.Result list = pgw.ok("schedules");
    assertThat(list.lines().get(0)).startsWith("NAME").contains("NEXT TICK", "OVERLAP", "FAILURES");
    assertThat(list.out())
        .containsPattern("(?m)^nightly +billing +0 3 \\* \\* \\* +UTC +\\S+ +skip +0 of 3 +active");

    Cli.Result filled =
        pgw.ok(
            "schedules",
            "backfill",
            "nightly",
            "--from",
            "2026-11-01T00:00:00Z",
            "--to",
            "2026-11-04T00:00:00Z");
    assertThat(filled.lines()).hasSize(4);
    assertThat(filled.lines().get(1)).startsWith("2026-11-01T03:00:00Z").contains("started");
    assertThat(filled.lines().get(2)).contains("skipped");

    Cli.Result tooLong =
        pgw.run(
            "schedules",
            "backfill",
            "nightly",
            "--from",
            "2020-01-01T00:00:00Z",
            "--to",
            "2026-01-01T00:00:00Z");
    assertThat(tooLong.exit()).isNotZero();
    assertThat(tooLong.err()).contains("more than 1000 ticks");
    assertThat(server.api().get("/v1/workflows/billing/runs").json().get("runs")).hasSize(1);
  }
}
