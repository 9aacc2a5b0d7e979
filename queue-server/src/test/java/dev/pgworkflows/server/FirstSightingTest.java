package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker counts as seen from its first poll on, with the default expiry (whose periodic reports
 * come every 5 s): the run started right after the poll has no {@code no_worker} blocker, and the
 * worker is listed, both read at once.
 */
class FirstSightingTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static List<String> kinds(JsonNode blockers) {
    List<String> kinds = new ArrayList<>();
    blockers.forEach(b -> kinds.add(b.get("kind").asText()));
    return kinds;
  }

  @Test
  void aRunStartedRightAfterAWorkersFirstPollIsNotBlockedForWantOfAWorker() {
    Api.Response polled =
        api.send(
            "POST",
            "/v1/workflows/first-seen/tasks/poll",
            Map.of("versions", List.of(1), "waitSeconds", 0),
            Map.of("X-Worker-Id", "first-seen-worker"));
    assertThat(polled.status()).as(polled.body()).isEqualTo(200);
    long run = server.worker("first-seen").start(Map.of());
    JsonNode blockers =
        api.get("/v1/workflows/first-seen/runs/" + run + "/blockers").json().get("blockers");
    assertThat(kinds(blockers)).doesNotContain("no_worker");
    assertThat(
            api.get("/v1/workers?workflow=first-seen").json().get("workers").findValuesAsText("id"))
        .contains("first-seen-worker");

    // A worker of another version only: the run's version is named as not served.
    api.send(
        "POST",
        "/v1/workflows/second-seen/tasks/poll",
        Map.of("versions", List.of(2), "waitSeconds", 0),
        Map.of("X-Worker-Id", "second-seen-worker"));
    WorkerClient starter = server.worker("second-seen");
    long other = WorkerClient.created(starter.startWith(Map.of("input", 1, "version", 1)));
    JsonNode notServed =
        api.get("/v1/workflows/second-seen/runs/" + other + "/blockers").json().get("blockers");
    assertThat(kinds(notServed)).contains("no_worker");
    assertThat(notServed.toString()).contains("\"servedVersions\":[2]");
  }
}
