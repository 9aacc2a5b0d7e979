package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.Labels;
import dev.pgworkflows.workflows.internal.jdbc.EngineLibrary;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * How a worker connects and how much it takes on: {@link #url(String)} or {@link
 * #dataSource(DataSource)}, then each setting changed by the method of its name, each giving new
 * options ({@code WorkerOptions.url("http://localhost:7700").token("t").concurrency(32)}). A
 * setting out of range throws {@link IllegalArgumentException} naming it.
 */
public final class WorkerOptions {
  private final String url;
  private final String token;
  private final int concurrency;
  private final Duration pollWait;
  private final Duration lease;
  private final List<Integer> versions;
  private final Duration shutdownTimeout;
  private final OpenTelemetry openTelemetry;
  private final boolean taskStream;
  private final InstantSource clock;
  private final DataSource dataSource;
  private final Map<String, String> labels;

  private WorkerOptions(Settings s) {
    if (s.dataSource == null
        && (s.url == null || !(s.url.startsWith("http://") || s.url.startsWith("https://")))) {
      throw new IllegalArgumentException("url must be an http:// or https:// URL, got " + s.url);
    }
    if (s.concurrency < 1 || s.concurrency > 1000) {
      throw new IllegalArgumentException("concurrency must be 1 to 1000, got " + s.concurrency);
    }
    if (s.pollWait == null
        || s.pollWait.isNegative()
        || s.pollWait.compareTo(Duration.ofSeconds(30)) > 0) {
      throw new IllegalArgumentException("pollWait must be 0 to 30 seconds");
    }
    if (s.lease == null || s.lease.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("lease must be at least one second");
    }
    if (s.shutdownTimeout == null || s.shutdownTimeout.isNegative()) {
      throw new IllegalArgumentException("shutdownTimeout must be zero or more");
    }
    if (s.clock == null) {
      throw new IllegalArgumentException("clock must not be null");
    }
    this.url = s.url;
    this.token = s.token;
    this.concurrency = s.concurrency;
    this.pollWait = s.pollWait;
    this.lease = s.lease;
    this.versions = s.versions == null ? null : List.copyOf(s.versions);
    this.shutdownTimeout = s.shutdownTimeout;
    this.openTelemetry = s.openTelemetry;
    this.taskStream = s.taskStream;
    this.clock = s.clock;
    this.dataSource = s.dataSource;
    try {
      this.labels =
          s.labels.isEmpty()
              ? Map.of()
              : Collections.unmodifiableMap(Labels.check("labels", s.labels, 0));
    } catch (Labels.Invalid e) {
      throw new IllegalArgumentException(e.getMessage(), e);
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
    Settings s = new Settings();
    s.dataSource = dataSource;
    s.taskStream = false;
    return new WorkerOptions(s);
  }

  /** A worker of the server at {@code url} (http:// or https://), with every other default. */
  public static WorkerOptions url(String url) {
    Settings s = new Settings();
    s.url = url;
    s.token = "local";
    s.taskStream =
        !"false".equalsIgnoreCase(System.getProperty("pgworkflows.worker.stream", "true"));
    return new WorkerOptions(s);
  }

  /**
   * The bearer token the worker sends: one holding scope {@code worker} (the worker protocol needs
   * no other), kept apart from the tokens that start runs or cancel them. A token without it is
   * refused with 403 naming the scope; the worker logs that and retries.
   */
  public WorkerOptions token(String t) {
    return with(s -> s.token = t);
  }

  /** Runs handled at once, 1 to 1000 (default 16). */
  public WorkerOptions concurrency(int n) {
    return with(s -> s.concurrency = n);
  }

  /**
   * How long one task stream lasts before the worker opens the next, or one long poll waits for
   * work (default 30 s, at most 30 s).
   */
  public WorkerOptions pollWait(Duration d) {
    return with(s -> s.pollWait = d);
  }

  /**
   * How long a task is held before another worker may take it; extended while a step runs (default
   * 60 s, at least 1 s).
   */
  public WorkerOptions lease(Duration d) {
    return with(s -> s.lease = d);
  }

  /** The versions this worker claims; default: the workflow's own version. */
  public WorkerOptions versions(Integer... v) {
    return with(s -> s.versions = List.of(v));
  }

  /** Sends step spans to this OpenTelemetry instead of {@code GlobalOpenTelemetry}. */
  public WorkerOptions openTelemetry(OpenTelemetry otel) {
    return with(s -> s.openTelemetry = otel);
  }

  /** How long {@link Worker#close()} waits for in-flight steps (default 30 s). */
  public WorkerOptions shutdownTimeout(Duration d) {
    return with(s -> s.shutdownTimeout = d);
  }

  /**
   * Whether the worker reads a task stream instead of long-polling for tasks (default true; the
   * system property {@code pgworkflows.worker.stream=false} turns it off for every worker of the
   * JVM). Under a heavy but not saturating load a stream keeps the step-to-step p99 lower (a start
   * on the server where it waits goes straight to it, where a long poll between its answer and the
   * next misses some); long polls take due tasks in bigger batches, which gives a saturated worker
   * more throughput (see docs/benchmarks.md). A proxy in front must pass streamed answers on as
   * they come (nginx does, for the stream's {@code X-Accel-Buffering: no}); a worker whose stream
   * is held back on the way long-polls instead, and says so in its log.
   */
  public WorkerOptions taskStream(boolean stream) {
    return with(s -> s.taskStream = stream);
  }

  /**
   * The wall clock the worker reads: a step's {@code startedAt}, {@link WorkflowContext#now()} and
   * a sleep's journaled {@code until} (default the system clock; tests may set their own). It
   * decides no timing: sleeps, wait timeouts, retry backoff, leases and deadlines run on the
   * server's clock, and intervals the worker measures (step timeouts, what is left of a sleep when
   * its completion is sent) on {@link System#nanoTime()}.
   */
  public WorkerOptions clock(InstantSource clock) {
    return with(s -> s.clock = clock);
  }

  public String url() {
    return url;
  }

  public String token() {
    return token;
  }

  public int concurrency() {
    return concurrency;
  }

  public Duration pollWait() {
    return pollWait;
  }

  public Duration lease() {
    return lease;
  }

  public List<Integer> versions() {
    return versions;
  }

  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  public OpenTelemetry openTelemetry() {
    return openTelemetry;
  }

  public boolean taskStream() {
    return taskStream;
  }

  public InstantSource clock() {
    return clock;
  }

  /**
   * The labels this worker declares, name to value ({@code Map.of("region", "eu", "gpu", "true")};
   * at most 20, names of lower-case letters, digits and {@code ._/-}, values of letters, digits and
   * {@code ._:/-}). A workflow may require or prefer labels of the workers that take its runs
   * ({@link Routing}), and a step may need them ({@link StepContext#onWorkers}); {@code GET
   * /v1/workers} lists them.
   */
  public WorkerOptions labels(Map<String, String> labels) {
    if (labels == null) {
      throw new IllegalArgumentException("labels must not be null (Map.of() for none)");
    }
    return with(s -> s.labels = Map.copyOf(labels));
  }

  /** The labels this worker declares (empty: none). */
  public Map<String, String> labels() {
    return labels;
  }

  /** The database the worker reaches without a server; null when it works through {@link #url}. */
  public DataSource dataSource() {
    return dataSource;
  }

  /** The settings, without the token. */
  @Override
  public String toString() {
    return "WorkerOptions[url="
        + url
        + ", concurrency="
        + concurrency
        + ", pollWait="
        + pollWait
        + ", lease="
        + lease
        + ", versions="
        + versions
        + ", shutdownTimeout="
        + shutdownTimeout
        + ", taskStream="
        + taskStream
        + (labels.isEmpty() ? "" : ", labels=" + Labels.format(labels))
        + (dataSource == null ? "" : ", over JDBC")
        + "]";
  }

  private WorkerOptions with(Consumer<Settings> change) {
    Settings s = new Settings();
    s.url = url;
    s.token = token;
    s.concurrency = concurrency;
    s.pollWait = pollWait;
    s.lease = lease;
    s.versions = versions;
    s.shutdownTimeout = shutdownTimeout;
    s.openTelemetry = openTelemetry;
    s.taskStream = taskStream;
    s.clock = clock;
    s.dataSource = dataSource;
    s.labels = labels;
    change.accept(s);
    return new WorkerOptions(s);
  }

  /** The settings while options are made, with their defaults. */
  private static final class Settings {
    String url;
    String token;
    int concurrency = 16;
    Duration pollWait = Duration.ofSeconds(30);
    Duration lease = Duration.ofSeconds(60);
    List<Integer> versions;
    Duration shutdownTimeout = Duration.ofSeconds(30);
    OpenTelemetry openTelemetry;
    boolean taskStream;
    InstantSource clock = InstantSource.system();
    DataSource dataSource;
    Map<String, String> labels = Map.of();
  }
}
