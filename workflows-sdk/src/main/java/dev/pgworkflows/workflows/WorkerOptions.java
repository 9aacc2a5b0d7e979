package dev.pgworkflows.workflows;

import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.util.List;

/**
 * How a worker connects and how much it takes on.
 *
 * @param concurrency runs handled at once (default 16)
 * @param pollWait how long one task stream lasts before the worker opens the next, or one long poll
 *     waits for work (default 30 s, at most 30 s)
 * @param lease how long a task is held before another worker may take it; extended while a step
 *     runs (default 60 s)
 * @param versions the versions this worker claims; default: the workflow's own version
 * @param shutdownTimeout how long {@link Worker#close()} waits for in-flight steps (default 30 s)
 * @param openTelemetry where step spans go; null means {@code GlobalOpenTelemetry}
 * @param longPoll whether the worker long-polls for tasks instead of reading a task stream (default
 *     false; also set by the system property {@code pgworkflows.worker.poll=true}). A stream brings
 *     each task sooner, and a run started on the server its stream waits on goes straight to it;
 *     long polls take due tasks in bigger batches, which gives a worker that is always saturated
 *     somewhat more throughput, and pass proxies that buffer streamed responses.
 */
public record WorkerOptions(
    String url,
    String token,
    int concurrency,
    Duration pollWait,
    Duration lease,
    List<Integer> versions,
    Duration shutdownTimeout,
    OpenTelemetry openTelemetry,
    boolean longPoll) {

  public WorkerOptions {
    if (url == null || !(url.startsWith("http://") || url.startsWith("https://"))) {
      throw new IllegalArgumentException("url must be an http:// or https:// URL, got " + url);
    }
    if (concurrency < 1 || concurrency > 1000) {
      throw new IllegalArgumentException("concurrency must be 1 to 1000, got " + concurrency);
    }
    if (pollWait.isNegative() || pollWait.compareTo(Duration.ofSeconds(30)) > 0) {
      throw new IllegalArgumentException("pollWait must be 0 to 30 seconds");
    }
    if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("lease must be at least one second");
    }
    versions = versions == null ? null : List.copyOf(versions);
  }

  public static WorkerOptions url(String url) {
    return new WorkerOptions(
        url,
        "local",
        16,
        Duration.ofSeconds(30),
        Duration.ofSeconds(60),
        null,
        Duration.ofSeconds(30),
        null,
        Boolean.getBoolean("pgworkflows.worker.poll"));
  }

  public WorkerOptions token(String t) {
    return new WorkerOptions(
        url, t, concurrency, pollWait, lease, versions, shutdownTimeout, openTelemetry, longPoll);
  }

  public WorkerOptions concurrency(int n) {
    return new WorkerOptions(
        url, token, n, pollWait, lease, versions, shutdownTimeout, openTelemetry, longPoll);
  }

  public WorkerOptions pollWait(Duration d) {
    return new WorkerOptions(
        url, token, concurrency, d, lease, versions, shutdownTimeout, openTelemetry, longPoll);
  }

  public WorkerOptions lease(Duration d) {
    return new WorkerOptions(
        url, token, concurrency, pollWait, d, versions, shutdownTimeout, openTelemetry, longPoll);
  }

  public WorkerOptions versions(Integer... v) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        pollWait,
        lease,
        List.of(v),
        shutdownTimeout,
        openTelemetry,
        longPoll);
  }

  /** Sends step spans to this OpenTelemetry instead of the global one. */
  public WorkerOptions openTelemetry(OpenTelemetry otel) {
    return new WorkerOptions(
        url, token, concurrency, pollWait, lease, versions, shutdownTimeout, otel, longPoll);
  }

  public WorkerOptions shutdownTimeout(Duration d) {
    return new WorkerOptions(
        url, token, concurrency, pollWait, lease, versions, d, openTelemetry, longPoll);
  }

  /** Long-polls for tasks instead of reading a task stream (see {@link WorkerOptions}). */
  public WorkerOptions longPoll(boolean poll) {
    return new WorkerOptions(
        url, token, concurrency, pollWait, lease, versions, shutdownTimeout, openTelemetry, poll);
  }
}
