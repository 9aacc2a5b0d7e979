package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every exit code a script may rely on, each from a real answer (or none) of a server, with the
 * problem's title and detail on one line of stderr; bad input changes nothing.
 */
class ExitCodesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  /** A server that requires tokens: an operator's, and one that may only read. */
  @RegisterExtension
  static final ServerOnFreshDatabase guarded =
      ServerOnFreshDatabase.with(
          "WORKFLOWS_API_TOKENS", "ops:admin,read,start=ops-token;viewer:read=viewer-token");

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  private String started(String workflow) {
    return pgw.json("runs", "start", workflow).get("runId").asText();
  }

  private static void assertOneErrorLine(Cli.Result r, String start) {
    assertThat(r.out()).isEmpty();
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).startsWith(start);
  }

  @Test
  void theHelpListsTheExitCodes() {
    Cli.Result help = pgw.ok("--help");
    assertThat(help.out())
        .contains("Exit codes:")
        .containsPattern("0 +ok")
        .containsPattern("3 +not found \\(404\\)")
        .containsPattern("4 +conflict \\(409\\)")
        .containsPattern("6 +cannot reach the server")
        .contains("WORKFLOWS_URL", "WORKFLOWS_TOKEN");
    assertThat(pgw.ok("runs", "signal", "--help").out()).contains("WORKFLOW RUN_ID EVENT");
  }

  @Test
  void anUnknownRunIsNotFound() {
    Cli.Result r = pgw.run("runs", "get", "order", "424242");
    assertThat(r.exit()).isEqualTo(ExitCodes.NOT_FOUND);
    assertOneErrorLine(r, "pgw: 404 Not Found: workflow order has no run 424242");
    assertThat(pgw.run("queues", "get", "nope").err()).contains("queue \"nope\" does not exist");
  }

  @Test
  void aSignalToAnEndedRunIsAConflictAndStoresNothing() {
    String run = started("ended");
    pgw.ok("runs", "cancel", "ended", run);

    Cli.Result r = pgw.run("runs", "signal", "ended", run, "paid");
    assertThat(r.exit()).isEqualTo(ExitCodes.CONFLICT);
    assertOneErrorLine(r, "pgw: 409 Conflict: ");
    assertThat(pgw.json("runs", "signals", "ended", run).get("signals")).isEmpty();
  }

  @Test
  void aWrongTokenIsUnauthorizedAndAWeakOneForbidden() {
    Cli wrong = new Cli(guarded::url, "not-a-token");
    Cli.Result r = wrong.run("workflows");
    assertThat(r.exit()).isEqualTo(ExitCodes.UNAUTHORIZED);
    assertOneErrorLine(r, "pgw: 401 Unauthorized");

    Cli.Result none = new Cli(guarded::url, null).run("queues");
    assertThat(none.exit()).isEqualTo(ExitCodes.UNAUTHORIZED);
    assertThat(none.err()).contains("set WORKFLOWS_TOKEN or --token");

    Cli ops = new Cli(guarded::url, "ops-token");
    ops.ok("queues", "create", "kept");
    ops.ok("queues", "send", "kept", "1");
    Cli.Result weak = new Cli(guarded::url, "viewer-token").run("queues", "purge", "kept");
    assertThat(weak.exit()).isEqualTo(ExitCodes.UNAUTHORIZED);
    assertOneErrorLine(weak, "pgw: 403 Forbidden: ");
    assertThat(weak.err()).contains("admin");
    assertThat(ops.json("queues", "get", "kept").at("/metrics/depth").asLong()).isEqualTo(1);

    Cli.Result byOption =
        wrong.run("queues", "get", "kept", "--token", "viewer-token", "--url", guarded.url());
    assertThat(byOption.exit()).as(byOption.err()).isZero();
  }

  @Test
  void aServerThatDoesNotAnswerIsUnreachable() {
    Cli.Result r = new Cli(() -> "http://127.0.0.1:1", "t").run("workflows");
    assertThat(r.exit()).isEqualTo(ExitCodes.UNREACHABLE);
    assertOneErrorLine(r, "pgw: cannot reach http://127.0.0.1:1");
  }

  @Test
  void anAddressThatIsNotAnHttpUrlIsAUsageError() {
    Cli.Result noScheme = new Cli(() -> "localhost:7700", "t").run("workflows");
    assertThat(noScheme.exit()).isEqualTo(ExitCodes.USAGE);
    assertOneErrorLine(noScheme, "pgw: WORKFLOWS_URL must be an http:// or https:// URL");
    assertThat(noScheme.err()).contains("localhost:7700");

    Cli.Result notAUri = new Cli(() -> "no such:address", "t").run("queues");
    assertThat(notAUri.exit()).isEqualTo(ExitCodes.USAGE);
    assertOneErrorLine(notAUri, "pgw: WORKFLOWS_URL must be");

    Cli.Result byOption = pgw.run("queues", "--url", "ftp://127.0.0.1:7700");
    assertThat(byOption.exit()).isEqualTo(ExitCodes.USAGE);
    assertOneErrorLine(byOption, "pgw: --url must be an http:// or https:// URL");

    Cli.Result noHost = pgw.run("queues", "--url", "http:///v1");
    assertThat(noHost.exit()).isEqualTo(ExitCodes.USAGE);
  }

  @Test
  void aServerThatFailsCountsAsUnreachable() throws Exception {
    HttpServer failing = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    failing.createContext(
        "/",
        exchange -> {
          byte[] body =
              ("{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
                      + "\"detail\":\"the database is unreachable\"}")
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/problem+json");
          exchange.sendResponseHeaders(503, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    failing.start();
    try {
      String url = "http://127.0.0.1:" + failing.getAddress().getPort();
      Cli.Result r = new Cli(() -> url, "t").run("queues");
      assertThat(r.exit()).isEqualTo(ExitCodes.UNREACHABLE);
      assertOneErrorLine(r, "pgw: 503 Service Unavailable: the database is unreachable");
    } finally {
      failing.stop(0);
    }
  }

  @Test
  void usageErrorsSendNothing() {
    pgw.ok("queues", "create", "untouched");

    assertThat(pgw.run("nosuch").exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(pgw.run("runs").exit()).isEqualTo(ExitCodes.USAGE);
    Cli.Result missing = pgw.run("runs", "get", "order");
    assertThat(missing.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(missing.err().lines())
        .containsExactly("pgw: Missing required parameter: 'RUN_ID'", "see: pgw runs get --help");
    assertThat(pgw.run("queues", "list", "--nope").exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(pgw.run("runs", "get", "order", "seven").exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(pgw.run("runs", "restart", "order", "1").exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(pgw.run("topics", "subscribe", "a.b", "--queue", "q", "--workflow", "w").exit())
        .isEqualTo(ExitCodes.USAGE);
    Cli.Result notJson = pgw.run("queues", "send", "untouched", "{not json");
    assertThat(notJson.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(notJson.err()).contains("not JSON");

    assertThat(pgw.json("queues", "get", "untouched").at("/metrics/depth").asLong()).isZero();
  }

  @Test
  void badInputTheServerRefusesIsAnErrorAndChangesNothing() {
    String run = started("refused");

    Cli.Result badName = pgw.run("queues", "create", "Not A Name");
    assertThat(badName.exit()).isEqualTo(ExitCodes.SERVER_ERROR);
    assertOneErrorLine(badName, "pgw: 400 Bad Request: ");
    assertThat(pgw.json("queues").get("queues").findValuesAsText("name"))
        .doesNotContain("Not A Name");

    Cli.Result badEvent = pgw.run("runs", "signal", "refused", run, "__engine");
    assertThat(badEvent.exit()).isEqualTo(ExitCodes.SERVER_ERROR);
    Cli.Result badStatus = pgw.run("runs", "list", "refused", "--status", "sleeping");
    assertThat(badStatus.exit()).isEqualTo(ExitCodes.SERVER_ERROR);
    assertThat(badStatus.err()).contains("status");
    assertThat(pgw.json("runs", "signals", "refused", run).get("signals")).isEmpty();
    assertThat(pgw.json("runs", "get", "refused", run).get("status").asText()).isEqualTo("running");
  }
}
