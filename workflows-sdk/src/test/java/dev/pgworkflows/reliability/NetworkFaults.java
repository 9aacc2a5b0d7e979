package dev.pgworkflows.reliability;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/** Bookkeeping shared by the network fault suites: live threads, and the figures to print. */
final class NetworkFaults {
  private final String suite;
  private final List<String> rows = new ArrayList<>();

  NetworkFaults(String suite) {
    this.suite = suite;
  }

  /**
   * Live platform threads of this JVM, the fault proxy's own left out (virtual threads are not
   * counted: they are not a leak a thread count could show).
   */
  static long liveThreads() {
    long proxy =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("fault-proxy"))
            .count();
    return ManagementFactory.getThreadMXBean().getThreadCount() - proxy;
  }

  static long threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith(prefix))
        .count();
  }

  void row(String fault, long heldMs, int acknowledged, long finishedMs, long probeMs) {
    rows.add(
        String.format(
            "%s | %s held %d ms | %d acknowledged runs so far, 0 lost | all finished %d ms after"
                + " healing | a run started after healing picked up in %d ms",
            suite, fault, heldMs, acknowledged, finishedMs, probeMs));
  }

  void print() {
    rows.forEach(System.out::println);
  }
}
