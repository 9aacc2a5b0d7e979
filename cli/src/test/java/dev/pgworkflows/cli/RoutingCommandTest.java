package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgw workflows routing}: sets required and preferred labels and stickiness, shows them,
 * removes them; bad labels exit non-zero naming the field and change nothing.
 */
class RoutingCommandTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aWorkflowsRoutingIsSetShownAndRemoved() {
    assertThat(pgw.ok("workflows", "routing", "render").out().strip())
        .isEqualTo("render: any worker");
    assertThat(
            pgw.ok(
                    "workflows",
                    "routing",
                    "render",
                    "--require",
                    "gpu=true,region=eu",
                    "--prefer",
                    "zone=eu-1",
                    "--sticky")
                .out()
                .strip())
        .isEqualTo("render: requires gpu=true,region=eu; prefers zone=eu-1; sticky");
    assertThat(pgw.ok("workflows", "routing", "render").out()).contains("sticky");

    Cli.Result bad = pgw.run("workflows", "routing", "render", "--require", "GPU=true");
    assertThat(bad.exit()).isNotZero();
    assertThat(bad.err()).contains("require");
    assertThat(pgw.ok("workflows", "routing", "render").out()).contains("requires gpu=true");

    assertThat(pgw.ok("workflows", "routing", "render", "--remove").out().strip())
        .isEqualTo("render: any worker");
  }
}
