package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw runs retrying}, {@code pause-step}, {@code resume-step}, {@code reset-step} and {@code
 * step-options}: a run's retrying step, shown and operated; bad options and a step that is not
 * retrying exit 1 and 4 (a conflict) with the server's reason.
 */
@Timeout(60)
class StepRetryCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aRetryingStepIsShownPausedResumedResetAndGivenOptions() {
    pgw.ok("runs", "start", "invoice", "--input", "1");
    HandWorker worker = new HandWorker(server.url(), "invoice");
    worker.failAttempt(worker.pollOne(), "charge");

    Cli.Result shown = pgw.ok("runs", "retrying", "invoice", "1", "charge");
    assertThat(shown.out())
        .containsPattern("(?m)^step +charge$")
        .containsPattern("(?m)^attempt +1$")
        .containsPattern("(?m)^state +backoff$")
        .contains("card declined");

    assertThat(pgw.ok("runs", "pause-step", "invoice", "1", "charge").out())
        .containsPattern("(?m)^state +paused$");
    assertThat(pgw.ok("runs", "blockers", "invoice", "1").out())
        .contains("the retries of step \"charge\" are paused");
    assertThat(pgw.ok("runs", "reset-step", "invoice", "1", "charge").out())
        .containsPattern("(?m)^attempt +0$");
    Cli.Result options =
        pgw.ok(
            "runs",
            "step-options",
            "invoice",
            "1",
            "charge",
            "--attempts",
            "8",
            "--timeout-ms",
            "30000");
    assertThat(options.out()).contains("\"attempts\":8").contains("\"timeoutMs\":30000");
    assertThat(pgw.ok("runs", "resume-step", "invoice", "1", "charge").out())
        .containsPattern("(?m)^state +backoff$");

    Cli.Result bad =
        pgw.run("runs", "step-options", "invoice", "1", "charge", "--backoff", "random");
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("backoff must be \"fixed\", \"linear\" or \"exponential\"");
    Cli.Result notRetrying = pgw.run("runs", "pause-step", "invoice", "1", "ship");
    assertThat(notRetrying.exit()).as("a conflict").isEqualTo(4);
    assertThat(notRetrying.err()).contains("run 1 is not retrying step \"ship\"");
  }
}
