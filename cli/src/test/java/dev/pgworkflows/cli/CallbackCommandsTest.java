package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw runs callbacks}: a run's callbacks as a table; {@code pgw callbacks rotate-key}: the
 * rotation of the key tokens are minted under.
 */
class CallbackCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aRunsCallbacksAreListedAndTheKeyRotates() {
    String run =
        pgw.json("runs", "start", "approvals", "--input", "{\"amount\": 12}").get("runId").asText();
    var minted =
        server
            .api()
            .post(
                "/v1/workflows/approvals/runs/" + run + "/callbacks/manager",
                Map.of("timeoutMs", 60_000));
    assertThat(minted.status()).as(minted.body()).isEqualTo(201);
    assertThat(minted.json().get("token").asText()).startsWith(run + ".1.");

    Cli.Result listed = pgw.ok("runs", "callbacks", "approvals", run);
    assertThat(listed.lines().get(0)).startsWith("NAME").contains("EXPIRES").contains("OUTCOME");
    assertThat(listed.lines().get(1)).startsWith("manager ").endsWith("-");
    assertThat(listed.out()).doesNotContain(minted.json().get("token").asText());

    assertThat(pgw.ok("callbacks", "rotate-key").out().strip())
        .isEqualTo("new callbacks are minted under key 2");
    var after =
        server
            .api()
            .post(
                "/v1/workflows/approvals/runs/" + run + "/callbacks/finance",
                Map.of("timeoutMs", 60_000));
    assertThat(after.json().get("token").asText()).startsWith(run + ".2.");
  }
}
