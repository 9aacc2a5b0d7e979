package dev.pgworkflows.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/** The burn-downs' starters: {@code n} runs started from 8 threads, as both systems start them. */
final class EightStarters {
  private EightStarters() {}

  /**
   * Calls {@code start} with the next {@code n} sequence numbers of {@code seqs}, from 8 threads,
   * and returns when every call has returned.
   */
  static void start(int n, AtomicInteger seqs, IntConsumer start) {
    ExecutorService starters = Executors.newFixedThreadPool(8);
    try {
      List<CompletableFuture<?>> fs = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        int seq = seqs.incrementAndGet();
        fs.add(CompletableFuture.runAsync(() -> start.accept(seq), starters));
      }
      CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0])).join();
    } finally {
      starters.shutdownNow();
    }
  }
}
