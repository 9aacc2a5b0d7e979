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
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * After a receive that took fewer than its max, a new poll of the same kind waits without
 * receiving, and the drained receive wakes no other poll of its kind, as long as no wake-up of the
 * queue went unanswered meanwhile; a full receive, another kind of poll, a missed wake-up, or the
 * while running out, and polls receive as before.
 */
class PollAfterDrainedReceiveTest {
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

  /** A receive that counts its calls and answers from {@code answers}, then with nothing. */
  private static Supplier<List<String>> counted(AtomicInteger calls, List<List<String>> answers) {
    return () -> {
      int n = calls.getAndIncrement();
      return n < answers.size() ? answers.get(n) : List.of();
    };
  }

  private CompletableFuture<List<String>> poll(String key, int max, Supplier<List<String>> r) {
    return longPoll.poll("q", key, null, 10_000, max, r);
  }

  private void awaitWaiting(int n) throws InterruptedException {
    for (int i = 0; i < 500 && waiters.waiting() < n; i++) {
      Thread.sleep(2);
    }
    assertThat(waiters.waiting()).isEqualTo(n);
  }

  @Test
  void aPollRightAfterADrainedReceiveWaitsWithoutReceivingAndAWakeUpStillReachesIt()
      throws Exception {
    AtomicInteger first = new AtomicInteger();
    assertThat(poll("k", 10, counted(first, List.of(List.of("a")))).get(5, TimeUnit.SECONDS))
        .containsExactly("a");

    AtomicInteger second = new AtomicInteger();
    CompletableFuture<List<String>> next = poll("k", 10, counted(second, List.of(List.of("b"))));
    awaitWaiting(1);
    assertThat(second.get()).as("no receive before a wake-up").isZero();
    assertThat(waiters.wakeOne("q")).isTrue();
    assertThat(next.get(5, TimeUnit.SECONDS)).containsExactly("b");
    assertThat(second.get()).isEqualTo(1);
  }

  @Test
  void aMissedWakeUpAFullReceiveAnotherKindOrTimePassingMakeANewPollReceive() throws Exception {
    // A wake-up that found nobody waiting, after the drained receive.
    poll("k", 10, counted(new AtomicInteger(), List.of(List.of("a")))).get(5, TimeUnit.SECONDS);
    assertThat(waiters.wakeOne("q")).isFalse();
    AtomicInteger afterMissed = new AtomicInteger();
    assertThat(poll("k", 10, counted(afterMissed, List.of(List.of("b")))).get(5, TimeUnit.SECONDS))
        .containsExactly("b");
    assertThat(afterMissed.get()).isEqualTo(1);

    // A receive that took its max may have left more (the missed wake-up lets it receive).
    AtomicInteger afterFull = new AtomicInteger();
    waiters.wakeOne("q");
    assertThat(
            poll("k", 1, counted(new AtomicInteger(), List.of(List.of("c"))))
                .get(5, TimeUnit.SECONDS))
        .containsExactly("c");
    assertThat(poll("k", 10, counted(afterFull, List.of(List.of("d")))).get(5, TimeUnit.SECONDS))
        .containsExactly("d");

    // A drained receive says nothing about what another kind of poll takes.
    AtomicInteger otherKind = new AtomicInteger();
    assertThat(
            poll("other", 10, counted(otherKind, List.of(List.of("e")))).get(5, TimeUnit.SECONDS))
        .containsExactly("e");

    // Only for a short while.
    AtomicInteger later = new AtomicInteger();
    poll("k", 10, counted(new AtomicInteger(), List.of(List.of("f")))).get(5, TimeUnit.SECONDS);
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(LongPoll.QUIET_NANOS) + 30);
    assertThat(poll("k", 10, counted(later, List.of(List.of("g")))).get(5, TimeUnit.SECONDS))
        .containsExactly("g");
  }

  @Test
  void aDrainedReceiveWakesNoOtherPollOfItsKindButAFullOneDoes() throws Exception {
    // Two polls of one kind wait; the longest-waiting is woken and drains what there is.
    AtomicInteger a = new AtomicInteger();
    AtomicInteger b = new AtomicInteger();
    CompletableFuture<List<String>> pa =
        poll("k", 10, counted(a, List.of(List.of(), List.of("x"))));
    awaitWaiting(1);
    CompletableFuture<List<String>> pb = poll("k", 10, counted(b, List.of()));
    awaitWaiting(2);
    int bBefore = b.get();
    waiters.wakeOne("q");
    assertThat(pa.get(5, TimeUnit.SECONDS)).containsExactly("x");
    Thread.sleep(200);
    assertThat(b.get()).as("the other poll of its kind is not woken").isEqualTo(bBefore);
    assertThat(pb.isDone()).isFalse();

    // A receive that took its max wakes the next poll, which looks again.
    AtomicInteger c = new AtomicInteger();
    CompletableFuture<List<String>> pc =
        longPoll.poll("q", "k", null, 10_000, 1, counted(c, List.of(List.of(), List.of("y"))));
    awaitWaiting(2);
    waiters.wakeOne("q"); // pb waited longest: it looks, finds nothing, and passes nothing on
    Thread.sleep(100);
    waiters.wakeOne("q"); // now pc: it takes its max of one and wakes pb
    assertThat(pc.get(5, TimeUnit.SECONDS)).containsExactly("y");
    for (int i = 0; i < 500 && b.get() < bBefore + 2; i++) {
      Thread.sleep(2);
    }
    assertThat(b.get()).isEqualTo(bBefore + 2);
    assertThat(pb.isDone()).isFalse();
  }

  @Test
  void aDrainedReceiveHandsItsWakeUpToAPollOfAnotherKind() throws Exception {
    AtomicInteger mine = new AtomicInteger();
    AtomicInteger theirs = new AtomicInteger();
    CompletableFuture<List<String>> pm =
        poll("k", 10, counted(mine, List.of(List.of(), List.of("x"))));
    awaitWaiting(1);
    CompletableFuture<List<String>> pt =
        poll("other", 10, counted(theirs, List.of(List.of(), List.of("z"))));
    awaitWaiting(2);
    waiters.wakeOne("q");
    assertThat(pm.get(5, TimeUnit.SECONDS)).containsExactly("x");
    assertThat(pt.get(5, TimeUnit.SECONDS)).containsExactly("z");
    assertThat(theirs.get()).isEqualTo(2);
  }
}
