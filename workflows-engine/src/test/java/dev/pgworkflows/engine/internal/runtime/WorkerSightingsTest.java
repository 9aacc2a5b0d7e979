package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.engine.internal.store.WorkerStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A snapshot taken while workers are first seen, on other threads, holds each worker whole (host
 * and mode never missing), and a worker changing how it connects is reported as it is now.
 */
class WorkerSightingsTest {

  @Test
  void aSnapshotTakenWhileWorkersAreFirstSeenNeverHoldsHalfOfOne() throws Exception {
    WorkerSightings sightings = new WorkerSightings(60_000);
    AtomicBoolean going = new AtomicBoolean(true);
    CompletableFuture<Void> seeing =
        CompletableFuture.runAsync(
            () -> {
              for (int i = 0; i < 200_000 && going.get(); i++) {
                sightings
                    .begin(
                        "wf",
                        new WorkerIdentity("w-" + i, "host-" + i, null),
                        List.of(1),
                        4,
                        i % 2 == 0 ? "poll" : "stream")
                    .done();
                if (i % 1000 == 999) {
                  sightings.goodbye("wf", "w-" + (i - 1));
                }
              }
            });
    List<WorkerStore.Seen> incomplete = new ArrayList<>();
    int snapshots = 0;
    while (!seeing.isDone() && snapshots < 20_000) {
      for (WorkerStore.Seen s : sightings.snapshot()) {
        if (s.host() == null || s.mode() == null || s.versions() == null) {
          incomplete.add(s);
        }
      }
      snapshots++;
    }
    going.set(false);
    seeing.get(30, TimeUnit.SECONDS);
    assertThat(incomplete).isEmpty();
    assertThat(snapshots).isPositive();
  }

  @Test
  void aWorkerSeenAgainIsReportedAsItIsNow() {
    WorkerSightings sightings = new WorkerSightings(60_000);
    sightings.begin("wf", new WorkerIdentity("w", "a", 2), List.of(1), null, "poll").done();
    sightings.begin("wf", new WorkerIdentity("w", "b", null), List.of(1, 2), null, "stream").done();
    assertThat(sightings.snapshot())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.host()).isEqualTo("b");
              assertThat(s.versions()).containsExactly(1, 2);
              assertThat(s.slots()).isEqualTo(2);
              assertThat(s.mode()).isEqualTo("stream");
            });
  }
}
