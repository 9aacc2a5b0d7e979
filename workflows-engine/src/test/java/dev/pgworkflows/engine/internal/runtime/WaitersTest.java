package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class WaitersTest {

  @Test
  void aWakeUpGoesToTheLongestWaitingPoll() {
    Waiters waiters = new Waiters();
    Waiters.Waiter first = waiters.register("q", "a", null);
    Waiters.Waiter second = waiters.register("q", "b", null);
    assertThat(waiters.wakeOne("q")).isTrue();
    assertThat(first.getNow(null)).isEmpty();
    assertThat(second.isDone()).isFalse();
    assertThat(waiters.wakeOne("other")).isFalse();
  }

  @Test
  void aPassedOnWakeUpSkipsTheKindsItTriedAndEndsWhenNoneIsLeft() {
    Waiters waiters = new Waiters();
    Waiters.Waiter a1 = waiters.register("q", "a", null);
    Waiters.Waiter a2 = waiters.register("q", "a", null);
    Waiters.Waiter b = waiters.register("q", "b", null);
    assertThat(waiters.passOn("q", Set.of("a"))).isTrue();
    assertThat(b.getNow(null)).containsExactly("a");
    assertThat(a1.isDone()).isFalse();
    assertThat(a2.isDone()).isFalse();
    assertThat(waiters.passOn("q", Set.of("a", "b"))).isFalse();
    assertThat(waiters.waiting()).isEqualTo(2);
  }

  @Test
  void aWaiterThatStoppedWaitingIsPassedOver() {
    Waiters waiters = new Waiters();
    Waiters.Waiter gone = waiters.register("q", "a", null);
    Waiters.Waiter next = waiters.register("q", "b", null);
    gone.complete(null); // its wait ran out as the wake-up came
    assertThat(waiters.wakeOne("q")).isTrue();
    assertThat(next.isDone()).isTrue();
  }

  @Test
  void aClaimTakesOnlyAWaitingPollWithFittingTermsAndNoWakeUpReachesItAfter() {
    Waiters waiters = new Waiters();
    Waiters.Waiter receiving = waiters.register("q", "a", "terms 1");
    Waiters.Waiter untermed = waiters.register("q", "a", null);
    Waiters.Waiter other = waiters.register("q", "b", "terms 2");
    Waiters.Waiter fitting = waiters.register("q", "a", "terms 1");
    untermed.arm();
    other.arm();
    fitting.arm();
    assertThat(waiters.claim("q", 0, "terms 1"::equals))
        .as("the one still receiving is not claimed, nor one without terms")
        .isSameAs(fitting);
    assertThat(fitting.getNow(null)).isSameAs(Waiters.CLAIMED);
    assertThat(waiters.claim("q", 0, "terms 1"::equals)).isNull();
    assertThat(waiters.claim("other", 0, t -> true)).isNull();

    fitting.give(java.util.List.of("task"));
    assertThat(fitting.handed.getNow(null)).isEqualTo(java.util.List.of("task"));
    assertThat(waiters.wakeOne("q")).isTrue();
    assertThat(receiving.isDone()).as("wake-ups go to those still registered").isTrue();
    assertThat(waiters.waiting()).isEqualTo(2);
  }

  @Test
  void wakeUpsThatFindNobodyAreCountedAndAClaimRemembersTheCount() {
    Waiters waiters = new Waiters();
    assertThat(waiters.missed("q")).isZero();
    assertThat(waiters.wakeOne("q")).isFalse();
    Waiters.Waiter a = waiters.register("q", "a", "terms");
    assertThat(waiters.passOn("q", Set.of("a"))).as("no waiter of another kind").isFalse();
    assertThat(waiters.missed("q")).isEqualTo(2);
    assertThat(waiters.wakeOne("q")).isTrue();
    assertThat(waiters.missed("q")).as("a wake-up that found a waiter").isEqualTo(2);
    assertThat(waiters.missed("other")).isZero();

    Waiters.Waiter b = waiters.register("q", "a", "terms");
    b.arm();
    assertThat(waiters.claim("q", 0, "terms"::equals)).isSameAs(b);
    assertThat(b.missedAtClaim).isEqualTo(2);
    assertThat(a.isDone()).isTrue();
  }

  @Test
  void aDismissedWaiterStopsWaitingAndTakesNoWakeUp() {
    Waiters waiters = new Waiters();
    Waiters.Waiter mine = waiters.register("q", "a", "mine");
    Waiters.Waiter theirs = waiters.register("q", "a", "theirs");
    mine.arm();
    theirs.arm();
    waiters.dismiss("q", "mine"::equals);
    assertThat(mine.isDone()).isTrue();
    assertThat(mine.getNow(Set.of("x"))).as("as if its time ran out").isNull();
    assertThat(waiters.wakeOne("q")).isTrue();
    assertThat(theirs.getNow(null)).isEmpty();
    assertThat(waiters.waiting()).isZero();
  }
}
