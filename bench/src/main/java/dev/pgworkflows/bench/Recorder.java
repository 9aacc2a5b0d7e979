package dev.pgworkflows.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Timestamps taken inside step code, keyed by the run's sequence number, so latencies are measured
 * where the work happens rather than at a client.
 */
final class Recorder {
  /** intended start, step a start, step a end, step b start, step b end, step c start. */
  private final ConcurrentHashMap<Integer, long[]> marks = new ConcurrentHashMap<>();

  private final AtomicInteger reachedLast = new AtomicInteger();
  private final boolean keep;

  Recorder() {
    this(true);
  }

  private Recorder(boolean keep) {
    this.keep = keep;
  }

  /** A recorder that keeps no timestamps, for loads too long to hold one per run in memory. */
  static Recorder nothingKept() {
    return new Recorder(false);
  }

  void intended(int seq, long nanos) {
    if (keep) {
      slot(seq)[0] = nanos;
    }
  }

  void mark(int seq, int index) {
    if (!keep) {
      return;
    }
    long[] s = slot(seq);
    if (s[index] == 0) {
      s[index] = System.nanoTime();
      if (index == 5) {
        reachedLast.incrementAndGet();
      }
    }
  }

  private long[] slot(int seq) {
    return marks.computeIfAbsent(seq, k -> new long[6]);
  }

  /** Runs whose last step has started. */
  int complete() {
    return reachedLast.get();
  }

  /** Milliseconds from the intended start to the first step. */
  List<Double> startToFirstStep() {
    List<Double> out = new ArrayList<>();
    for (long[] s : marks.values()) {
      if (s[0] != 0 && s[1] != 0) {
        out.add((s[1] - s[0]) / 1e6);
      }
    }
    return out;
  }

  /** Milliseconds from one step's end to the next step's start. */
  List<Double> stepToStep() {
    List<Double> out = new ArrayList<>();
    for (long[] s : marks.values()) {
      if (s[2] != 0 && s[3] != 0) {
        out.add((s[3] - s[2]) / 1e6);
      }
      if (s[4] != 0 && s[5] != 0) {
        out.add((s[5] - s[4]) / 1e6);
      }
    }
    return out;
  }

  /** Each step-to-step gap as {previous step's end (nanoTime), gap in ns}. */
  List<long[]> gaps() {
    List<long[]> out = new ArrayList<>();
    for (long[] s : marks.values()) {
      for (int i = 2; i <= 4; i += 2) {
        if (s[i] != 0 && s[i + 1] != 0) {
          out.add(new long[] {s[i], s[i + 1] - s[i]});
        }
      }
    }
    return out;
  }
}
