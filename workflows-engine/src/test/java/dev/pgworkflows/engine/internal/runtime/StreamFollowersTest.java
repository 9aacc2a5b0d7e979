package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Followers of runs' streams: a write wakes its run's followers only, and none is left behind. */
class StreamFollowersTest {

  @Test
  void aWriteWakesEveryFollowerOfItsRunAndNoOther() {
    StreamFollowers followers = new StreamFollowers();
    CompletableFuture<Void> a1 = followers.next(1);
    CompletableFuture<Void> a2 = followers.next(1);
    CompletableFuture<Void> b = followers.next(2);
    followers.wake(StreamFollowers.WAKEUP_PREFIX + "1");
    assertThat(a1).isDone();
    assertThat(a2).isDone();
    assertThat(b).isNotDone();
    followers.wake("orders"); // a queue's wake-up: not ours
    assertThat(b).isNotDone();
  }

  @Test
  void aFollowerWhoseWaitRanOutLeavesNothingBehind() throws InterruptedException {
    StreamFollowers followers = new StreamFollowers();
    CompletableFuture<Void> f = followers.next(7);
    long t0 = System.nanoTime();
    assertThat(followers.await(7, f, 50)).isTrue();
    assertThat((System.nanoTime() - t0) / 1_000_000).isBetween(40L, 900L);
    assertThat(followers.runsFollowed()).isZero();
  }

  @Test
  void closingEndsEveryWait() throws InterruptedException {
    StreamFollowers followers = new StreamFollowers();
    CompletableFuture<Void> f = followers.next(3);
    followers.close();
    assertThat(f).isDone();
    assertThat(followers.await(3, followers.next(3), 5_000)).isFalse();
  }

  @Test
  void aDroppedFollowerLeavesNothingBehind() {
    StreamFollowers followers = new StreamFollowers();
    CompletableFuture<Void> f = followers.next(5);
    CompletableFuture<Void> g = followers.next(5);
    followers.drop(5, f);
    assertThat(followers.runsFollowed()).isEqualTo(1);
    followers.drop(5, g);
    assertThat(followers.runsFollowed()).isZero();
    followers.drop(5, g); // again: nothing to do
    assertThat(followers.runsFollowed()).isZero();
  }

  @Test
  void followersBeyondTheCapAreNotAdmittedUntilOneLeaves() {
    StreamFollowers followers = new StreamFollowers(2, java.time.Duration.ofMinutes(5));
    assertThat(followers.enter()).isTrue();
    assertThat(followers.enter()).isTrue();
    assertThat(followers.enter()).isFalse();
    assertThat(followers.following()).isEqualTo(2);
    followers.leave();
    assertThat(followers.enter()).isTrue();
    assertThat(followers.maxAnswerMillis()).isEqualTo(300_000);
  }
}
