package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw runs state}, {@code pgw runs streams}, {@code pgw runs chain}, {@code pgw audit} and
 * {@code pgw rate-limit}: what a run holds besides its journal, and what operators did.
 */
class RunViewCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aRunsStateStreamsAndChainAreShown() {
    pgw.ok("runs", "start", "report", "--input", "{\"month\": 1}");
    HandWorker worker = new HandWorker(server.url(), "report");
    JsonNode first = worker.pollOne();
    worker.journalWithState(first, "count", Map.of("rows", 42, "phase", "counted"));
    worker.writeStream(first, "progress", Map.of("done", 1), Map.of("done", 2));
    worker.continueAsNew(first, Map.of("month", 2));

    Cli.Result state = pgw.ok("runs", "state", "report", "1");
    assertThat(state.lines().get(0)).startsWith("KEY").contains("VERSION", "VALUE");
    assertThat(state.out())
        .containsPattern("(?m)^phase +\\d+ +counted$")
        .containsPattern("(?m)^rows +\\d+ +42");

    Cli.Result streams = pgw.ok("runs", "streams", "report", "1");
    assertThat(streams.out()).containsPattern("(?m)^progress +2 +closed");
    Cli.Result entries = pgw.ok("runs", "streams", "report", "1", "progress");
    assertThat(entries.out())
        .containsPattern("(?m)^0 +\\S+ +\\{\"done\":1\\}")
        .containsPattern("(?m)^1 +\\S+ +\\{\"done\":2\\}")
        .contains("end of stream");

    Cli.Result chain = pgw.ok("runs", "chain", "report", "1");
    assertThat(chain.lines()).hasSize(3);
    assertThat(chain.lines().get(1)).containsPattern("^1 +completed");
    assertThat(chain.lines().get(2)).containsPattern("^2 +running").contains("{\"month\":2}");
  }

  @Test
  void theAuditTrailAndAKeysRateLimitAreShown() {
    server.api().put("/v1/rate-limits/acme", Map.of("limit", 5, "periodMs", 1000));
    assertThat(pgw.ok("rate-limit", "acme").out().strip()).isEqualTo("acme: 5 per 1000 ms");
    Cli.Result audit = pgw.ok("audit", "--action", "ratelimit.put");
    assertThat(audit.lines().get(0)).startsWith("AT").contains("ACTOR", "ACTION", "TARGET");
    assertThat(audit.lines().get(1)).contains("ratelimit.put").contains("acme");
    Cli.Result bad = pgw.run("audit", "--action", "Not An Action");
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("action must be dot-separated lower-case words");
  }
}
