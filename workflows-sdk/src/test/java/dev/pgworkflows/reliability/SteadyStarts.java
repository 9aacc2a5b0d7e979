package dev.pgworkflows.reliability;

import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.WorkflowException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs of {@link ScaleOutWorkflow} started through one client, one after another with a pause
 * between, on a thread of its own: each acknowledged run is kept with its input, and each refused
 * start counted by what refused it ({@code HTTP <status>} for an {@link ApiException}, {@code
 * WorkflowException} for the SDK's retryable answer, else the exception's class).
 */
final class SteadyStarts implements AutoCloseable {
  private final AtomicBoolean producing = new AtomicBoolean(true);
  private final AtomicInteger acked = new AtomicInteger();
  private final AtomicLong lastAck = new AtomicLong();
  private final Thread thread;

  /**
   * Starts producing: inputs from {@code inputs}, acknowledged runs into {@code runs}, refusals
   * into {@code refusals} (both may be shared by several producers).
   */
  SteadyStarts(
      String name,
      WorkflowClient client,
      long pauseMs,
      AtomicInteger inputs,
      Map<Long, Integer> runs,
      Map<String, Integer> refusals) {
    thread =
        new Thread(
            () -> {
              while (producing.get()) {
                int n = inputs.incrementAndGet();
                try {
                  runs.put(client.start(ScaleOutWorkflow.NAME, n).runId(), n);
                  acked.incrementAndGet();
                  lastAck.set(System.nanoTime());
                } catch (RuntimeException e) {
                  refusals.merge(kind(e), 1, Integer::sum); // not acknowledged
                }
                try {
                  Thread.sleep(pauseMs);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            name);
    thread.start();
  }

  /** What refused a start, as the producers count it. */
  static String kind(RuntimeException e) {
    if (e instanceof ApiException api) {
      return "HTTP " + api.status();
    }
    // The SDK's answer for a server it could not reach or that could not serve (502 to 504):
    // retry with the same idempotency key.
    return e instanceof WorkflowException ? "WorkflowException" : e.getClass().getName();
  }

  /** Whether every refusal was one a client may retry: a 503, or the SDK's retryable answer. */
  static boolean onlyRetryable(Map<String, Integer> refusals) {
    return refusals.keySet().stream()
        .allMatch(k -> k.equals("HTTP 503") || k.equals("WorkflowException"));
  }

  int acked() {
    return acked.get();
  }

  /** When the last start was acknowledged ({@link System#nanoTime()}), 0 before the first. */
  long lastAck() {
    return lastAck.get();
  }

  /** Stops after the start in hand, and waits for that. */
  @Override
  public void close() {
    producing.set(false);
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return Integer.toString(acked.get());
  }
}
