package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.engine.internal.runtime.WorkerIdentity;
import dev.pgworkflows.protocol.Headers;
import dev.pgworkflows.protocol.Labels;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How a worker names itself to the server, in headers on each of its requests: {@code X-Worker-Id}
 * ({@code <host>-<pid>-<n>}, the n-th worker of this process), {@code X-Worker-Host} and {@code
 * X-Worker-Slots}, and {@code X-Worker-Labels} when it declares labels. The server lists workers by
 * them ({@code GET /v1/workers}).
 */
final class WorkerIds {
  private static final AtomicInteger COUNT = new AtomicInteger();
  private static final String HOST = host();

  private WorkerIds() {}

  /** The headers of a new worker with {@code slots} slots and {@code labels} (checked). */
  static Map<String, String> headers(int slots, Map<String, String> labels) {
    String id = HOST + "-" + ProcessHandle.current().pid() + "-" + COUNT.incrementAndGet();
    Map<String, String> h = new LinkedHashMap<>();
    h.put(Headers.WORKER_ID, printable(id, 200));
    h.put(Headers.WORKER_HOST, printable(HOST, 255));
    h.put(Headers.WORKER_SLOTS, Integer.toString(slots));
    if (!labels.isEmpty()) {
      h.put(Headers.WORKER_LABELS, Labels.format(labels));
    }
    return Map.copyOf(h);
  }

  /** The same names as the engine's record of a worker it serves in this process. */
  static WorkerIdentity identity(Map<String, String> headers, Map<String, String> labels) {
    return new WorkerIdentity(
        headers.get(Headers.WORKER_ID),
        headers.get(Headers.WORKER_HOST),
        Integer.valueOf(headers.get(Headers.WORKER_SLOTS)),
        labels);
  }

  private static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "unknown-host";
    }
  }

  /** The value as the server takes it: printable ASCII, not too long. */
  private static String printable(String value, int max) {
    StringBuilder b = new StringBuilder(Math.min(value.length(), max));
    for (int i = 0; i < value.length() && b.length() < max; i++) {
      char c = value.charAt(i);
      b.append(c >= 0x20 && c <= 0x7e ? c : '_');
    }
    return b.length() == 0 ? "worker" : b.toString();
  }
}
