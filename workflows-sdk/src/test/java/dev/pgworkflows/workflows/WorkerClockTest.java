package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.SettableClock;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker reads wall-clock time from its options' clock: a step's start and a sleep's journaled
 * {@code until} are the clock's readings, but the sleep lasts its duration by the server's clock
 * (see {@link SkewedWorkerClockTest} for moving clocks minutes off).
 */
class WorkerClockTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void stepsStartByTheWorkersClockAndSleepsLastTheirDuration() {
    // An hour behind: by this clock a sleep called now ends an hour before the server's now.
    Instant anHourAgo = Instant.now().minus(Duration.ofHours(1)).truncatedTo(ChronoUnit.MILLIS);
    SettableClock clock = new SettableClock(anHourAgo);
    Workflow<Integer, Integer> wf =
        Workflow.define("clocked", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("one", Integer.class, () -> n + 1);
                  ctx.step().sleep("a-second", Duration.ofSeconds(1));
                  return a;
                });
    Worker worker =
        wf.serve(WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).clock(clock));
    try {
      long run = server.client().start(wf, 1).runId();
      assertThat(
              server
                  .client()
                  .runs()
                  .awaitResult("clocked", run, Integer.class, Duration.ofSeconds(30)))
          .isEqualTo(2);
      List<StepInfo> steps = server.client().runs().steps("clocked", run);
      assertThat(steps).extracting(StepInfo::name).containsExactly("one", "a-second");
      // By the server's times: step one's completion went out when the sleep was called, and the
      // sleep's row completes where it ended, a second later (not at once, as an end placed by a
      // clock an hour behind would).
      assertThat(Duration.between(steps.get(0).completedAt(), steps.get(1).completedAt()))
          .isGreaterThanOrEqualTo(Duration.ofMillis(950));
      assertThat(steps.get(0).startedAt()).isEqualTo(anHourAgo);
      assertThat(steps.get(1).startedAt()).isEqualTo(anHourAgo);
      assertThat(steps.get(1).output().get("until").asText())
          .isEqualTo(anHourAgo.plus(Duration.ofSeconds(1)).toString());
    } finally {
      worker.close();
    }
  }
}
