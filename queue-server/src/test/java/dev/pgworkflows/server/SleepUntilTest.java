package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.SettableClock;
import dev.pgworkflows.server.testing.WorkerClient;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What is left of a sleep whose worker gave its {@code until} is measured by the server's clock
 * when the completion arrives: an until that clock has passed makes the run due at once, however
 * long {@code delayMs} is.
 */
@Timeout(60)
class SleepUntilTest {
  private static final SettableClock clock = SettableClock.atNow();

  @RegisterExtension
  static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start().withClock(clock);

  private static final WorkerClient worker = server.worker("until-clock");

  @Test
  void anUntilTheServersClockHasPassedIsDueAtOnce() {
    long id = worker.start(1);
    JsonNode task = worker.pollUntil(1).get(id);

    // The server's clock stands a minute ahead of the worker's, whose sleep ends in 10 s.
    Instant workerNow = Instant.now();
    clock.set(workerNow.plusSeconds(60));
    long t0 = System.nanoTime();
    Api.Response ok =
        worker.complete(
            task,
            Map.of(
                "step",
                Map.of("name", "nap", "kind", "sleep"),
                "next",
                Map.of("delayMs", 3_600_000, "until", workerNow.plusSeconds(10).toString())));
    assertThat(ok.status()).as(ok.body()).isEqualTo(200);
    assertThat(ok.json().get("outcome").asText()).isEqualTo("ok");

    JsonNode resumed = worker.pollUntil(1).get(id);
    assertThat(resumed.get("reason").asText()).isEqualTo("resume");
    assertThat((System.nanoTime() - t0) / 1e6).isLessThan(5_000.0);
  }
}
