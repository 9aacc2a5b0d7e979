package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.engine.internal.runtime.WorkerIdentity;
import dev.pgworkflows.protocol.Headers;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How a worker names itself to the server, in headers on each of its requests: {@code X-Worker-Id}
 * ({@code <host>-<pid>-<n>}, the n-th worker of this process), {@code X-Worker-Host} and {@code
 * X-Worker-Slots}. The server lists workers by them ({@code GET /v1/workers}).
 */
final class WorkerIds {
  private static final AtomicInteger COUNT = new AtomicInteger();
  private static final String HOST = host();

  private WorkerIds() {}

  /** The headers of a new worker with {@code slots} slots. */
  static Map<String, String> headers(int slots) {
    String id = HOST + "-" + ProcessHandle.current().pid() + "-" + COUNT.incrementAndGet();
    return Map.of(
        Headers.WORKER_ID, printable(id, 200),
        Headers.WORKER_HOST, printable(HOST, 255),
        Headers.WORKER_SLOTS, Integer.toString(slots));
  }

  /** The same names as the engine's record of a worker it serves in this process. */
  static WorkerIdentity identity(Map<String, String> headers) {
    return new WorkerIdentity(
        headers.get(Headers.WORKER_ID),
        headers.get(Headers.WORKER_HOST),
        Integer.valueOf(headers.get(Headers.WORKER_SLOTS)));
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
