package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sleep lasts its {@code delayMs} from the server's receipt, by the server's clock: an {@code
 * until} a worker sends (workers of earlier versions placed the end by their own wall clock) is
 * ignored, so a worker whose clock runs behind cannot cut a sleep short.
 */
class SleepUntilTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final WorkerClient worker = server.worker("until-clock");

  @Test
  void anUntilTheServersClockHasPassedDoesNotEndTheSleepEarly() {
    long id = worker.start(1);
    JsonNode task = worker.pollUntil(1).get(id);

    // The worker's clock stands an hour behind: by it, the 2 s sleep ended long ago.
    Instant workerNow = Instant.now().minusSeconds(3_600);
    long t0 = System.nanoTime();
    Api.Response ok =
        worker.complete(
            task,
            Map.of(
                "step",
                Map.of("name", "nap", "kind", "sleep"),
                "next",
                Map.of("delayMs", 2_000, "until", workerNow.plusSeconds(2).toString())));
    assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    assertThat(ok.json().get("outcome").asText()).isEqualTo("ok");

    JsonNode resumed = worker.pollUntil(1).get(id);
    double sleptMs = (System.nanoTime() - t0) / 1e6;
    assertThat(resumed.get("reason").asText()).isEqualTo("resume");
    assertThat(sleptMs).isBetween(1_900.0, 5_000.0);
  }
}
