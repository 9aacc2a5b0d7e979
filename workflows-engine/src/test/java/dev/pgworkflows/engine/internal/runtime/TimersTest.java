package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class TimersTest {
  private record Fired(String queue, long atMs) {}

  @Test
  void everyDueTimeWakesItsQueueWhenDue() throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    List<Fired> fired = new CopyOnWriteArrayList<>();
    try {
      Timers timers =
          new Timers(
              scheduler,
              q -> fired.add(new Fired(q, System.currentTimeMillis())),
              InstantSource.system());
      Instant now = Instant.now();
      Instant first = now.plusMillis(100);
      Instant second = now.plusMillis(300);
      timers.wakeAt("a", second);
      timers.wakeAt("a", first);
      timers.wakeAt("a", first); // the same due time again: one wake-up
      timers.wakeAt("b", first);
      assertThat(timers.isSet("a")).isTrue();

      Awaitility.await().atMost(5, TimeUnit.SECONDS).until(() -> fired.size() >= 3);
      Thread.sleep(200); // nothing more comes
      assertThat(fired).extracting(Fired::queue).containsExactlyInAnyOrder("a", "a", "b");
      List<Long> a = fired.stream().filter(f -> f.queue().equals("a")).map(Fired::atMs).toList();
      assertThat(a.get(0)).isGreaterThanOrEqualTo(first.toEpochMilli());
      assertThat(a.get(1)).isGreaterThanOrEqualTo(second.toEpochMilli());
      assertThat(timers.isSet("a")).isFalse();
      assertThat(timers.isSet("b")).isFalse();
    } finally {
      scheduler.shutdownNow();
    }
  }
}
