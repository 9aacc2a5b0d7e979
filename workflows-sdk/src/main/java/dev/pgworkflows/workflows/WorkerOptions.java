package dev.pgworkflows.workflows;

import dev.pgworkflows.workflows.internal.jdbc.EngineLibrary;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import javax.sql.DataSource;

/**
 * How a worker connects and how much it takes on.
 *
 * @param token the bearer token the worker sends: one holding scope {@code worker} (the worker
 *     protocol needs no other), kept apart from the tokens that start runs or cancel them. A token
 *     without it is refused with 403 naming the scope; the worker logs that and retries
 * @param concurrency runs handled at once (default 16)
 * @param pollWait how long one task stream lasts before the worker opens the next, or one long poll
 *     waits for work (default 30 s, at most 30 s)
 * @param lease how long a task is held before another worker may take it; extended while a step
 *     runs (default 60 s)
 * @param versions the versions this worker claims; default: the workflow's own version
 * @param shutdownTimeout how long {@link Worker#close()} waits for in-flight steps (default 30 s)
 * @param openTelemetry where step spans go; null means {@code GlobalOpenTelemetry}
 * @param taskStream whether the worker reads a task stream instead of long-polling for tasks
 *     (default true; the system property {@code pgworkflows.worker.stream=false} turns it off for
 *     every worker of the JVM). Under a heavy but not saturating load a stream keeps the
 *     step-to-step p99 lower (a start on the server where it waits goes straight to it, where a
 *     long poll between its answer and the next misses some); long polls take due tasks in bigger
 *     batches, which gives a saturated worker more throughput (see docs/benchmarks.md). A proxy in
 *     front must pass streamed answers on as they come (nginx does, for the stream's {@code
 *     X-Accel-Buffering: no}); a worker whose stream is held back on the way long-polls instead,
 *     and says so in its log.
 * @param clock the wall clock the worker reads: a step's {@code startedAt}, {@link
 *     WorkflowContext#now()} and a sleep's journaled {@code until} (default the system clock; tests
 *     may set their own). It decides no timing: sleeps, wait timeouts, retry backoff, leases and
 *     deadlines run on the server's clock, and intervals the worker measures (step timeouts, what
 *     is left of a sleep when its completion is sent) on {@link System#nanoTime()}.
 * @param dataSource the database the worker reaches without a server (see {@link
 *     #dataSource(DataSource)}); null when it works through the server at {@code url}
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
    boolean taskStream,
    InstantSource clock,
    DataSource dataSource) {

  public WorkerOptions {
    if (dataSource == null
        && (url == null || !(url.startsWith("http://") || url.startsWith("https://")))) {
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
    if (clock == null) {
      throw new IllegalArgumentException("clock must not be null");
    }
  }

  /**
   * A worker with no server between it and its database: it takes tasks, completes steps and holds
   * leases through the engine in this process, over connections from {@code dataSource} (which must
   * reach a database whose schema this version knows; see {@link PgWorkflows#start}). It is the
   * same worker as one served by a URL, and the two may serve one workflow side by side.
   */
  public static WorkerOptions dataSource(DataSource dataSource) {
    if (dataSource == null) {
      throw new IllegalArgumentException("dataSource must not be null");
    }
    EngineLibrary.require();
    return new WorkerOptions(
        null,
        null,
        16,
        Duration.ofSeconds(30),
        Duration.ofSeconds(60),
        null,
        Duration.ofSeconds(30),
        null,
        false,
        InstantSource.system(),
        dataSource);
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
        !"false".equalsIgnoreCase(System.getProperty("pgworkflows.worker.stream", "true")),
        InstantSource.system(),
        null);
  }

  public WorkerOptions token(String t) {
    return new WorkerOptions(
        url,
        t,
        concurrency,
        pollWait,
        lease,
        versions,
        shutdownTimeout,
        openTelemetry,
        taskStream,
        clock,
        dataSource);
  }

  public WorkerOptions concurrency(int n) {
    return new WorkerOptions(
        url,
        token,
        n,
        pollWait,
        lease,
        versions,
        shutdownTimeout,
        openTelemetry,
        taskStream,
        clock,
        dataSource);
  }

  public WorkerOptions pollWait(Duration d) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        d,
        lease,
        versions,
        shutdownTimeout,
        openTelemetry,
        taskStream,
        clock,
        dataSource);
  }

  public WorkerOptions lease(Duration d) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        pollWait,
        d,
        versions,
        shutdownTimeout,
        openTelemetry,
        taskStream,
        clock,
        dataSource);
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
        taskStream,
        clock,
        dataSource);
  }

  /** Sends step spans to this OpenTelemetry instead of the global one. */
  public WorkerOptions openTelemetry(OpenTelemetry otel) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        pollWait,
        lease,
        versions,
        shutdownTimeout,
        otel,
        taskStream,
        clock,
        dataSource);
  }

  public WorkerOptions shutdownTimeout(Duration d) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        pollWait,
        lease,
        versions,
        d,
        openTelemetry,
        taskStream,
        clock,
        dataSource);
  }

  /** Reads a task stream instead of long-polling for tasks (see {@link WorkerOptions}). */
  public WorkerOptions taskStream(boolean stream) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        pollWait,
        lease,
        versions,
        shutdownTimeout,
        openTelemetry,
        stream,
        clock,
        dataSource);
  }

  /** Reads wall-clock time from {@code clock} instead of the system clock (for tests). */
  public WorkerOptions clock(InstantSource clock) {
    return new WorkerOptions(
        url,
        token,
        concurrency,
        pollWait,
        lease,
        versions,
        shutdownTimeout,
        openTelemetry,
        taskStream,
        clock,
        dataSource);
  }
}
