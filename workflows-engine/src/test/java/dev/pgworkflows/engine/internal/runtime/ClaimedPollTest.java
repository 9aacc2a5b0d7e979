package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A waiting poll claimed for a handoff answers with what it is given, whenever it is given; given
 * nothing, it goes back to receiving until its deadline; and a poll still receiving is never
 * claimed.
 */
class ClaimedPollTest {
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final ExecutorService io = Executors.newFixedThreadPool(2);
  private final Waiters waiters = new Waiters();
  private final LongPoll longPoll =
      new LongPoll(
          waiters,
          new Timers(scheduler, waiters::wakeOne, InstantSource.system()),
          io,
          scheduler,
          q -> Optional.empty(),
          InstantSource.system());

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
    io.shutdownNow();
  }

  private Waiters.Waiter claimWhenWaiting() throws InterruptedException {
    for (int i = 0; i < 500; i++) {
      Waiters.Waiter w = longPoll.claim("q", 0, "terms"::equals);
      if (w != null) {
        return w;
      }
      Thread.sleep(2);
    }
    throw new AssertionError("the poll never came to wait");
  }

  @Test
  void aClaimedPollAnswersWithWhatItIsGivenEvenPastItsDeadline() throws Exception {
    AtomicInteger receives = new AtomicInteger();
    CompletableFuture<List<String>> poll =
        longPoll.poll(
            "q",
            "k",
            "terms",
            200,
            10,
            () -> {
              receives.incrementAndGet();
              return List.of();
            });
    Waiters.Waiter w = claimWhenWaiting();
    Thread.sleep(400); // the poll's deadline passes while the claimer works
    assertThat(poll.isDone()).as("a claimed poll waits for its claimer").isFalse();
    w.give(List.of("task"));
    assertThat(poll.get(5, TimeUnit.SECONDS)).containsExactly("task");
    assertThat(receives.get()).isEqualTo(1);
    assertThat(waiters.waiting()).isZero();
  }

  @Test
  void givenNothingAPollReceivesAgainAndWaitsOutItsDeadline() throws Exception {
    AtomicInteger receives = new AtomicInteger();
    CompletableFuture<List<String>> poll =
        longPoll.poll(
            "q",
            "k",
            "terms",
            10_000,
            10,
            () -> receives.incrementAndGet() == 2 ? List.of("found") : List.<String>of());
    claimWhenWaiting().give(List.of());
    assertThat(poll.get(5, TimeUnit.SECONDS)).containsExactly("found");

    long started = System.nanoTime();
    CompletableFuture<List<String>> brief =
        longPoll.poll("q", "k", "terms", 300, 10, List::<String>of);
    claimWhenWaiting().give(List.of());
    assertThat(brief.get(5, TimeUnit.SECONDS)).isEmpty();
    assertThat((System.nanoTime() - started) / 1_000_000).isGreaterThanOrEqualTo(290);
    assertThat(waiters.waiting()).isZero();
  }

  @Test
  void aPollStillReceivingOrWithoutTermsIsNotClaimed() throws Exception {
    Waiters.Waiter[] during = new Waiters.Waiter[1];
    CompletableFuture<List<String>> poll =
        longPoll.poll(
            "q",
            "k",
            "terms",
            10_000,
            10,
            () -> {
              during[0] = longPoll.claim("q", 0, t -> true);
              return List.of("mine");
            });
    assertThat(poll.get(5, TimeUnit.SECONDS)).containsExactly("mine");
    assertThat(during[0]).isNull();

    CompletableFuture<List<String>> untermed =
        longPoll.poll("q", "k", null, 300, 10, List::<String>of);
    Thread.sleep(100);
    assertThat(longPoll.claim("q", 0, t -> true)).isNull();
    assertThat(untermed.get(5, TimeUnit.SECONDS)).isEmpty();
  }
}
