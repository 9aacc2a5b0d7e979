package dev.pgworkflows.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;

/** CPU time of this JVM's live threads, for telling which of them a workload keeps busy. */
final class ThreadCpu {
  private ThreadCpu() {}

  /** CPU nanoseconds of each live thread, keyed by its id and name. */
  static Map<String, Long> now() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Map<String, Long> cpu = new HashMap<>();
    for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
      if (t != null) {
        long ns = mx.getThreadCpuTime(t.getThreadId());
        if (ns >= 0) {
          cpu.put(t.getThreadId() + " " + t.getThreadName(), ns);
        }
      }
    }
    return cpu;
  }
}
