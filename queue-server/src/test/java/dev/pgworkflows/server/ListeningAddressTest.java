package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.server.internal.http.Exposure;
import dev.pgworkflows.server.testing.LogCapture;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where the server listens: on loopback unless told otherwise, and beyond it only with tokens (or
 * the explicit insecure flag, which it warns about). 127.0.0.2 stands for "another interface": a
 * loopback address, so no traffic leaves the machine, but not the one a 127.0.0.1 bind accepts on.
 */
class ListeningAddressTest {

  private static void connect(String host, int port) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 2_000);
    }
  }

  @Test
  void withoutTokensTheServerListensOnLoopbackOnlyAndSaysSo() throws Exception {
    try (LogCapture log = LogCapture.of(Exposure.class);
        TestServer server = TestServer.start()) {
      int port = server.server().port();
      connect("127.0.0.1", port);
      assertThatThrownBy(() -> connect("127.0.0.2", port)).isInstanceOf(ConnectException.class);
      assertThat(log.messages())
          .anyMatch(
              m ->
                  m.startsWith(
                          "WARN WORKFLOWS_API_TOKENS is not set: listening on loopback"
                              + " (127.0.0.1) only")
                      && m.contains("presence-only mode"));
    }
  }

  @Test
  void onAllInterfacesWithTokensItAnswersOnAnotherAddressAndStillWantsTheToken() throws Exception {
    try (LogCapture log = LogCapture.of(Exposure.class);
        TestServer server =
            TestServer.start(
                Map.of("WORKFLOWS_BIND", "0.0.0.0", "WORKFLOWS_API_TOKENS", "ci:read=wide-open"))) {
      Api other = new Api("http://127.0.0.2:" + server.server().port(), "wide-open");
      assertThat(other.get("/v1/queues").status()).isEqualTo(200);
      assertThat(other.withToken("guess").get("/v1/queues").status()).isEqualTo(401);
      assertThat(log.messages()).contains("INFO listening on 0.0.0.0; 1 API token(s): ci [read]");
    }
  }

  @Test
  void beyondLoopbackWithoutTokensTheConfigurationIsRefusedNamingTheVariables() {
    for (String bind : List.of("0.0.0.0", "::")) {
      assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_BIND", bind)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "WORKFLOWS_BIND="
                  + bind
                  + " listens beyond loopback, which needs WORKFLOWS_API_TOKENS (or"
                  + " WORKFLOWS_INSECURE_NO_AUTH=true to serve without authentication)");
    }
    assertThat(ServerConfig.from(Map.of("WORKFLOWS_BIND", "127.0.0.2")).bindsLoopbackOnly())
        .isTrue();
    assertThat(ServerConfig.from(Map.of()).bind()).isEqualTo("127.0.0.1");
    assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_INSECURE_NO_AUTH", "yes")))
        .hasMessageStartingWith("WORKFLOWS_INSECURE_NO_AUTH must be true or false");
  }

  @Test
  void theServerProcessRefusesToStartWithOneLineNamingTheVariable() throws Exception {
    assertThat(mainOutput(Map.of("WORKFLOWS_BIND", "0.0.0.0")))
        .singleElement()
        .satisfies(
            line ->
                assertThat(line)
                    .contains("server refused to start: WORKFLOWS_BIND=0.0.0.0")
                    .contains("WORKFLOWS_API_TOKENS"));
    assertThat(mainOutput(Map.of("WORKFLOWS_API_TOKENS", "ops:admn=never-shown")))
        .singleElement()
        .satisfies(
            line ->
                assertThat(line)
                    .contains("WORKFLOWS_API_TOKENS: token \"ops\": unknown scope \"admn\"")
                    .doesNotContain("never-shown"));
  }

  @Test
  void theInsecureFlagServesBeyondLoopbackWithoutTokensAndWarns() throws Exception {
    try (LogCapture log = LogCapture.of(Exposure.class);
        TestServer server =
            TestServer.start(
                Map.of("WORKFLOWS_BIND", "0.0.0.0", "WORKFLOWS_INSECURE_NO_AUTH", "true"))) {
      Api other = new Api("http://127.0.0.2:" + server.server().port(), "anything");
      assertThat(other.get("/v1/queues").status()).isEqualTo(200);
      assertThat(log.messages())
          .anyMatch(
              m ->
                  m.startsWith(
                      "WARN WORKFLOWS_INSECURE_NO_AUTH=true: listening on 0.0.0.0 without"
                          + " authentication"));
    }
  }

  /** What {@code Main} prints when started with {@code env} (and no database), until it exits. */
  private static List<String> mainOutput(Map<String, String> env) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment()
        .keySet()
        .removeIf(k -> k.startsWith("WORKFLOWS_") || k.endsWith("DATABASE_URL"));
    pb.environment().putAll(env);
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the server exits").isTrue();
    assertThat(p.exitValue()).isEqualTo(2);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return out.lines().filter(l -> !l.isBlank()).toList();
  }
}
