package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code ctx.attempt()} is per step: a step retried to its second attempt does not make the next
 * step, reached by an inline continuation, a second attempt too.
 */
class AttemptsPerStepTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void theStepAfterARetriedOneIsAFirstAttempt() {
    AtomicInteger flakyCalls = new AtomicInteger();
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    Workflow<String, String> wf =
        Workflow.define("per-step", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step()
                      .run(
                          "flaky",
                          () -> {
                            seen.put("flaky", ctx.attempt());
                            if (flakyCalls.incrementAndGet() == 1) {
                              throw new IllegalStateException("first try fails");
                            }
                          },
                          Retry.fixed(3, Duration.ofMillis(10)));
                  ctx.step().run("steady", () -> seen.put("steady", ctx.attempt()));
                  ctx.step().run("last", () -> seen.put("last", ctx.attempt()));
                  return "done";
                });
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("per-step", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("done");
    assertThat(seen).containsEntry("flaky", 2).containsEntry("steady", 1).containsEntry("last", 1);
    List<StepInfo> steps = server.client().runs().steps("per-step", run);
    assertThat(steps).extracting(StepInfo::attempts).containsExactly(2, 1, 1);
  }
}
