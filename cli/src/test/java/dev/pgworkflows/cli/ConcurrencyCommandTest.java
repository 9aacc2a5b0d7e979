package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw workflows concurrency}: sets a limit with its strategy and limitFrom, shows it,
 * removes it; {@code pgw runs start} says what the strategy made of a start; a bad strategy exits
 * non-zero naming the field and changes nothing.
 */
class ConcurrencyCommandTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aLimitWithItsStrategyIsSetShownAndRemoved() {
    assertThat(pgw.ok("workflows", "concurrency", "reports").out().strip())
        .isEqualTo("reports: no concurrency limit");
    Cli.Result set =
        pgw.ok(
            "workflows",
            "concurrency",
            "reports",
            "--limit",
            "1",
            "--strategy",
            "skip",
            "--limit-from",
            "$.plan",
            "--limits",
            "free=1,premium=10");
    assertThat(set.out().strip())
        .isEqualTo("reports: 1 per key, strategy skip, limit from $.plan (free=1, premium=10)");

    Cli.Result bad =
        pgw.run("workflows", "concurrency", "reports", "--limit", "1", "--strategy", "newest");
    assertThat(bad.exit()).isNotZero();
    assertThat(bad.err()).contains("strategy");
    assertThat(pgw.ok("workflows", "concurrency", "reports").out()).contains("strategy skip");

    assertThat(
            pgw.ok(
                    "workflows",
                    "concurrency",
                    "reports",
                    "--limit",
                    "4",
                    "--total",
                    "10",
                    "--weights",
                    "acme=3")
                .out()
                .strip())
        .isEqualTo("reports: 4 per key, strategy queue, 10 in all, keys in turn (weights acme=3)");
    assertThat(pgw.ok("workflows", "concurrency", "reports", "--remove").out().strip())
        .isEqualTo("reports: no concurrency limit");
  }

  @Test
  void aStartSaysWhatTheStrategyMadeOfIt() {
    pgw.ok(
        "workflows", "concurrency", "builds", "--limit", "1", "--strategy", "cancel_in_progress");
    String first = pgw.ok("runs", "start", "builds", "--concurrency-key", "main").out();
    assertThat(first).matches("run \\d+ started: running\\R");
    String run = first.split(" ")[1];
    Cli.Result second = pgw.ok("runs", "start", "builds", "--concurrency-key", "main");
    assertThat(second.lines()).hasSize(2);
    assertThat(second.lines().get(1)).isEqualTo("cancelled: " + run);

    pgw.ok("workflows", "concurrency", "digest", "--limit", "1", "--strategy", "skip");
    String kept = pgw.ok("runs", "start", "digest", "--concurrency-key", "k").out().split(" ")[1];
    assertThat(pgw.ok("runs", "start", "digest", "--concurrency-key", "k").out().strip())
        .isEqualTo("skipped: run " + kept + " of the key is running");

    pgw.ok("workflows", "concurrency", "lines", "--limit", "1");
    pgw.ok("runs", "start", "lines", "--concurrency-key", "k");
    assertThat(pgw.ok("runs", "start", "lines", "--concurrency-key", "k").out())
        .matches("run \\d+ started: running \\(queued: its key is full\\)\\R");
  }

  @Test
  void aThrottleIsSetShownAndRemovedAndABadOneRefused() {
    assertThat(pgw.ok("workflows", "throttle", "mailer").out().strip())
        .isEqualTo("mailer: no throttle");
    assertThat(
            pgw.ok(
                    "workflows",
                    "throttle",
                    "mailer",
                    "--limit",
                    "100",
                    "--period-ms",
                    "60000",
                    "--burst",
                    "10",
                    "--per-key")
                .out()
                .strip())
        .isEqualTo("mailer: 100 starts per 60000 ms, 10 at once, per key");
    Cli.Result bad = pgw.run("workflows", "throttle", "mailer", "--limit", "5");
    assertThat(bad.exit()).isNotZero();
    assertThat(bad.err()).contains("periodMs");
    assertThat(pgw.ok("workflows", "throttle", "mailer").out()).contains("100 starts per");
    assertThat(pgw.ok("workflows", "throttle", "mailer", "--remove").out().strip())
        .isEqualTo("mailer: no throttle");
  }
}
