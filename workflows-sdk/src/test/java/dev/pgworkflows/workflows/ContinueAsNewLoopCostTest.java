package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A workflow that loops forever by continue-as-new costs the same per loop at its thousandth loop
 * as at its first: each run starts with a fresh journal, and nothing the chain leaves behind (its
 * ended runs, their journals) slows the next. One step, then continue, 1,000 times; the mean time
 * per loop of the last 100 loops stays under twice that of the first 100.
 */
class ContinueAsNewLoopCostTest {
  private static final int LOOPS = 1_000;
  private static final int WINDOW = 100;

  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void theThousandthLoopCostsNoMoreThanTheFirst() {
    // Each loop's step records when it ran; the body continues with the next loop's number.
    long[] at = new long[LOOPS + 1];
    Workflow<Integer, Integer> loop =
        Workflow.define("loop-forever", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  ctx.step().run("tick", () -> at[n] = System.nanoTime());
                  return n >= LOOPS ? n : ctx.continueAsNew(n + 1);
                });
    server.serve(loop);
    Started s = server.client().start("loop-forever", 0);
    Integer last =
        server
            .client()
            .runs()
            .awaitResult("loop-forever", s.runId(), Integer.class, Duration.ofMinutes(2));
    assertThat(last).isEqualTo(LOOPS);
    assertThat(at).as("every loop ran its step").doesNotContain(0L);

    double first = meanMs(at, 1, WINDOW);
    double lastWindow = meanMs(at, LOOPS - WINDOW + 1, LOOPS);
    System.out.printf(
        "continue-as-new, %d loops of one step: %.2f ms per loop over the first %d,"
            + " %.2f ms over the last %d (%.2fx)%n",
        LOOPS, first, WINDOW, lastWindow, WINDOW, lastWindow / first);
    assertThat(lastWindow)
        .as("ms per loop, last %d vs first %d", WINDOW, WINDOW)
        .isLessThan(2 * first);
    assertThat(server.client().runs().get("loop-forever", s.runId()).continuedTo()).isNotNull();
  }

  /** The mean interval in ms between consecutive loops' steps, for loops from..to. */
  private static double meanMs(long[] at, int from, int to) {
    long[] gaps = new long[to - from + 1];
    for (int i = from; i <= to; i++) {
      gaps[i - from] = at[i] - at[i - 1];
    }
    return Arrays.stream(gaps).average().orElseThrow() / 1e6;
  }
}
