package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.engine.internal.store.StateStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The waits for state hold a bounded number of requests, read a run once however often it is woken
 * meanwhile, and answer a run's waiters when it has ended. The reads are the state store's shape,
 * given here so a test controls what they see and when they return.
 */
class StateWaitsTest {
  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(1);
  private final ExecutorService io = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
    io.shutdownNow();
  }

  @Test
  void pastTheMostWaitsAWaitIsRefusedUntilOneEnds() throws Exception {
    // Every run reads as running, without state: only the time runs out.
    StateWaits running =
        new StateWaits(
            runs -> {
              Map<Long, StateStore.RunState> m = new HashMap<>();
              runs.forEach(r -> m.put(r, new StateStore.RunState(true, List.of())));
              return m;
            },
            scheduler,
            io,
            Duration.ofSeconds(60),
            2);
    CompletableFuture<StateWaits.Answer> a = running.await(1, "k", 0, Duration.ofMillis(300));
    CompletableFuture<StateWaits.Answer> b = running.await(2, "k", 0, Duration.ofSeconds(20));
    assertThat(a).isNotNull();
    assertThat(b).isNotNull();
    assertThat(running.await(3, "k", 0, Duration.ofSeconds(20))).isNull();
    assertThat(a.get(5, TimeUnit.SECONDS).entry()).isEmpty();
    assertThat(running.await(3, "k", 0, Duration.ofSeconds(20))).isNotNull();
    assertThat(running.waiting()).isEqualTo(2);
  }

  @Test
  void aRunWokenManyTimesWhileReadIsReadOnceMoreAtMost() throws Exception {
    AtomicInteger reads = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    StateWaits waits =
        new StateWaits(
            runs -> {
              reads.incrementAndGet();
              try {
                release.await(10, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return Map.of(7L, new StateStore.RunState(true, List.of()));
            },
            scheduler,
            io,
            Duration.ofSeconds(60),
            10);
    CompletableFuture<StateWaits.Answer> w = waits.await(7, "k", 0, Duration.ofSeconds(20));
    Thread.sleep(200);
    for (int i = 0; i < 100; i++) {
      waits.changed(7);
    }
    release.countDown();
    Thread.sleep(500);
    // The read in flight, and one more for the wakes that came during it.
    assertThat(reads.get()).isBetween(1, 2);
    assertThat(w).isNotDone();
  }

  @Test
  void aRunThatEndedAnswersItsWaitersWithRunningFalse() throws Exception {
    AtomicInteger ended = new AtomicInteger();
    StateWaits waits =
        new StateWaits(
            runs ->
                Map.of(
                    9L,
                    new StateStore.RunState(
                        ended.get() == 0, List.of(new StateStore.Entry("other", "1", 4)))),
            scheduler,
            io,
            Duration.ofSeconds(60),
            10);
    CompletableFuture<StateWaits.Answer> w = waits.await(9, "k", 0, Duration.ofSeconds(20));
    Thread.sleep(200);
    assertThat(w).isNotDone();
    ended.set(1);
    waits.changed(9);
    StateWaits.Answer a = w.get(5, TimeUnit.SECONDS);
    assertThat(a.running()).isFalse();
    assertThat(a.entry()).isEmpty();
    assertThat(waits.waiting()).isZero();
  }
}
