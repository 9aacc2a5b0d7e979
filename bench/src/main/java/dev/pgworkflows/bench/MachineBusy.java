package dev.pgworkflows.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How busy the whole machine's cores were over a window, from {@code /proc/stat}: every process,
 * the kernel's work for them included. An open-loop load that saturates the machine settles where
 * its batches are big enough for the cores to keep up, so its CPU per step is the cores divided by
 * the rate, whatever the code costs; this tells whether that is the case. Linux only.
 */
final class MachineBusy {
  private final long[] start;

  private MachineBusy(long[] start) {
    this.start = start;
  }

  /** Starts a window now. */
  static MachineBusy start() throws IOException {
    return new MachineBusy(ticks());
  }

  /** The busy share of the cores since {@link #start}, 0 to 1. */
  double share() throws IOException {
    long[] now = ticks();
    long idle = now[0] - start[0];
    long all = now[1] - start[1];
    return all == 0 ? 0 : 1 - (double) idle / all;
  }

  /** Idle (idle and iowait) and all ticks of the machine so far. */
  private static long[] ticks() throws IOException {
    String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
    long all = 0;
    for (int i = 1; i < f.length && i <= 8; i++) {
      all += Long.parseLong(f[i]);
    }
    return new long[] {Long.parseLong(f[4]) + Long.parseLong(f[5]), all};
  }
}
