package dev.pgworkflows.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time of this JVM's live threads from {@code /proc/self/task}, the JVM's own (compilers,
 * collectors) included, for telling which of them a workload keeps busy. Linux only; elsewhere
 * empty.
 */
final class ThreadCpu {
  private ThreadCpu() {}

  /** CPU seconds of each live thread, keyed by its id and its (15-character) OS name. */
  static Map<String, Double> now() {
    Map<String, Double> cpu = new HashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          // pid (comm) state ppid ... utime stime: fields 14 and 15, counted after the comm.
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          String[] f = stat.substring(close + 2).split(" ");
          double seconds = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
          cpu.put(task.getFileName() + " " + stat.substring(open + 1, close), seconds);
        } catch (IOException | RuntimeException gone) {
          // The thread ended while being read.
        }
      }
    } catch (IOException e) {
      return Map.of();
    }
    return cpu;
  }
}
