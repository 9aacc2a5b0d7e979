package dev.pgworkflows.workflows.internal.link;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchItem;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * How starts from many threads share sends, against a sender that takes 100 ms a send (as a server
 * does that waits for a database connection): each call gets its own run, and returns after the
 * sends ahead of it and its own, however many starts keep arriving behind it.
 */
class StartBatchesTest {
  private static final long SEND_MS = 100;

  @Test
  void aCallReturnsOnceItsOwnStartIsAnsweredWhileOthersKeepArriving() throws Exception {
    AtomicLong ids = new AtomicLong();
    AtomicLong sends = new AtomicLong();
    StartBatches batches =
        new StartBatches(
            new StartBatches.Sender() {
              @Override
              public StartResult one(String workflow, StartRequest body) {
                pause();
                sends.incrementAndGet();
                return new StartResult(ids.incrementAndGet(), "running", true);
              }

              @Override
              public List<StartAnswer> many(String workflow, List<StartBatchItem> items) {
                pause();
                sends.incrementAndGet();
                List<StartAnswer> out = new ArrayList<>();
                for (int i = 0; i < items.size(); i++) {
                  out.add(new StartResult(ids.incrementAndGet(), "running", true));
                }
                return out;
              }
            });
    int callers = 32;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    Set<Long> runs = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    List<Future<Long>> slowest = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      slowest.add(
          pool.submit(
              () -> {
                long worst = 0;
                while (System.nanoTime() < until) {
                  long t0 = System.nanoTime();
                  StartResult r = batches.start("w", new StartRequest(null, null, null, null));
                  worst = Math.max(worst, System.nanoTime() - t0);
                  assertThat(runs.add(r.runId())).as("run %d answered once", r.runId()).isTrue();
                }
                return TimeUnit.NANOSECONDS.toMillis(worst);
              }));
    }
    long worst = 0;
    for (Future<Long> f : slowest) {
      worst = Math.max(worst, f.get());
    }
    pool.shutdown();
    // Two sends in flight at most: a start waits for at most the one going out as it arrives and
    // its own (with room for a slow machine), not for as long as the three seconds of arrivals.
    assertThat(worst).as("the longest call, in ms").isLessThan(4 * SEND_MS + 300);
    assertThat(ids.get()).isEqualTo(runs.size());
    assertThat(sends.get()).as("sends, for %d starts", runs.size()).isLessThan(runs.size() / 4);
  }

  private static void pause() {
    try {
      Thread.sleep(SEND_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
