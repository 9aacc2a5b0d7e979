package dev.pgworkflows.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

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

  /** What an open-loop load returned, and the machine's busy share over its middle. */
  record Over<T>(T result, double busy) {}

  /**
   * Runs an open-loop load of {@code seconds} and measures the machine over its middle, where it is
   * steady: from 2.5 s after the call (the load begins about half a second in, and its first
   * seconds fill the pipes) to 0.5 s before the last start is due. The busy share is NaN for a load
   * shorter than 4 s.
   */
  static <T> Over<T> over(double seconds, Callable<T> load) throws Exception {
    double[] busy = {Double.NaN};
    long windowMs = (long) (seconds * 1000) - 3000;
    Thread window =
        new Thread(
            () -> {
              if (windowMs < 1000) {
                return;
              }
              try {
                Thread.sleep(2500);
                MachineBusy b = start();
                Thread.sleep(windowMs);
                busy[0] = b.share();
              } catch (IOException | InterruptedException e) {
                // Left as NaN.
              }
            },
            "machine-busy");
    window.setDaemon(true);
    window.start();
    T result = load.call();
    window.join();
    return new Over<>(result, busy[0]);
  }

  /** Machine CPU in ms per step: a busy share of all cores at {@code stepsPerSecond}. */
  static double msPerStep(double busy, double stepsPerSecond) {
    return busy * Runtime.getRuntime().availableProcessors() / stepsPerSecond * 1000;
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
