package dev.pgworkflows.workflows.internal.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The transport keeps the URLs of the paths it sends to: more distinct paths than it keeps (runs
 * looked up one by one) each still reach their own resource, before and after the kept ones are
 * dropped, and a path that is not a URL is refused as before (an IllegalArgumentException).
 */
class TransportTest {
  @RegisterExtension static final LiveServer server = new LiveServer();
  private static Transport transport;

  @BeforeAll
  static void connect() {
    transport = new Transport(server.url(), null);
  }

  @Test
  void manyDistinctPathsEachReachTheirOwnResource() {
    JsonNode started = transport.post("/v1/workflows/kept/runs", Map.of("input", Map.of("n", 1)));
    long runId = started.get("runId").asLong();
    for (int i = 0; i < 200; i++) {
      long other = runId + 1000 + i;
      assertThatThrownBy(() -> transport.get("/v1/workflows/kept/runs/" + other))
          .isInstanceOf(ApiException.class)
          .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(404))
          .hasMessageContaining(Long.toString(other));
      if (i % 50 == 0) {
        JsonNode run = transport.get("/v1/workflows/kept/runs/" + runId);
        assertThat(run.get("runId").asLong()).isEqualTo(runId);
      }
    }
    assertThat(transport.get("/v1/workflows/kept/runs/" + runId).get("status").asText())
        .isEqualTo("running");
  }

  @Test
  void aPathThatIsNotAUrlIsRefused() {
    assertThatThrownBy(() -> transport.get("/v1/workflows/has space/runs"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
