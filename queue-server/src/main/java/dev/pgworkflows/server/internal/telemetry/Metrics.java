package dev.pgworkflows.server.internal.telemetry;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.Sql;
import dev.pgworkflows.sweeper.Sweeper;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * Prometheus metrics: the design's workflow metrics, gauges read from the database when scraped
 * (runs in flight at most a second old, the queues' numbers at most five), HTTP server timings by
 * route template, and JVM and pool metrics. Every meter has help text. No label carries an
 * unbounded value such as a run id.
 */
public final class Metrics implements WorkflowEvents, Sweeper.Listener {
  /**
   * How old the runs in flight may be when scraped, in ms: a start shows within a second. Read from
   * the database, not counted here, because every server of a database starts and ends its runs;
   * the query reads the running runs' index entries only, and only on a scrape.
   */
  private static final long RUNS_REFRESH_MS = 1_000;

  /** How old the queues' numbers may be when scraped, in ms: they read every queue's table. */
  private static final long QUEUES_REFRESH_MS = 5_000;

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Sql sql;
  private final Counter swept;
  private final MultiGauge queueDepth;
  private final MultiGauge queueInFlight;
  private final MultiGauge queueOldest;
  private final MultiGauge queueDead;
  private final MultiGauge runsInFlight;
  private volatile long runsRefreshedAt;
  private volatile long queuesRefreshedAt;

  // The meters the request path records to, looked up by their labels here rather than built and
  // registered again on every request: the registry's own look-up builds an id and tags each time.
  private record RouteKey(String method, String route, int status) {}

  private record StepKey(String workflow, String step) {}

  private record EndKey(String workflow, String status) {}

  private record SignalKey(String workflow, String event) {}

  private record UpdateKey(String workflow, String update, String outcome) {}

  private final Map<RouteKey, Timer> requestTimers = new ConcurrentHashMap<>();
  private final Map<StepKey, DistributionSummary> stepDurations = new ConcurrentHashMap<>();
  private final Map<String, Counter> runsStarted = new ConcurrentHashMap<>();
  private final Map<EndKey, Counter> runsCompleted = new ConcurrentHashMap<>();
  private final Map<String, DistributionSummary> runDurations = new ConcurrentHashMap<>();
  private final Map<SignalKey, Counter> signals = new ConcurrentHashMap<>();
  private final Map<UpdateKey, Counter> updates = new ConcurrentHashMap<>();
  private final Map<StepKey, Counter> stepRetries = new ConcurrentHashMap<>();

  public Metrics(Sql sql, HikariDataSource pool, IntSupplier waitingPolls) {
    this.sql = sql;
    // Names promtool's lint takes: the processor binder's CPU count is a gauge with a _count
    // suffix (renamed system_cpus) and its CPU time a counter in ns (process_cpu_usage says it).
    registry
        .config()
        .meterFilter(
            new MeterFilter() {
              @Override
              public Meter.Id map(Meter.Id id) {
                return id.getName().equals("system.cpu.count") ? id.withName("system.cpus") : id;
              }
            })
        .meterFilter(MeterFilter.deny(id -> id.getName().equals("process.cpu.time")));
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    pool.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
    swept =
        Counter.builder("workflow_retention_swept")
            .description("Finished runs deleted by the retention sweeper")
            .register(registry);
    Gauge.builder("queue_waiting_polls", waitingPolls::getAsInt)
        .description("Long polls waiting on this server")
        .register(registry);
    queueDepth =
        MultiGauge.builder("queue_depth").description("Messages in the queue").register(registry);
    queueInFlight =
        MultiGauge.builder("queue_in_flight")
            .description("Messages received and not yet deleted")
            .register(registry);
    queueOldest =
        MultiGauge.builder("queue_oldest_age_seconds")
            .description("Age of the oldest message")
            .register(registry);
    queueDead =
        MultiGauge.builder("queue_dead_lettered")
            .description("Messages in the dead-letter store")
            .register(registry);
    runsInFlight =
        MultiGauge.builder("workflow_runs_in_flight")
            .description("Runs started and not yet finished, by workflow")
            .register(registry);
  }

  public void register(RoutesConfig routes) {
    routes.get("/metrics", this::scrape);
  }

  /**
   * A request begins: it is timed from here to {@link #requestEnded}. Called before the hooks that
   * may refuse a request, so refused requests are counted too.
   */
  public void requestStarted(Context ctx) {
    ctx.attribute("metrics.start", System.nanoTime());
  }

  /** A request ends: its time is recorded under its route template (null for an unknown path). */
  public void requestEnded(Context ctx, String route) {
    Long start = ctx.attribute("metrics.start");
    if (start == null) {
      return;
    }
    if (route == null) {
      return; // unmatched paths stay out: their labels would be unbounded
    }
    long nanos = System.nanoTime() - start;
    requestTimers
        .computeIfAbsent(
            new RouteKey(ctx.method().name(), route, ctx.statusCode()),
            k ->
                Timer.builder("http_server_requests")
                    .description("HTTP requests by route template")
                    .tags(
                        "method",
                        k.method(),
                        "route",
                        k.route(),
                        "status",
                        Integer.toString(k.status()))
                    .register(registry))
        .record(Duration.ofNanos(nanos));
  }

  private void scrape(Context ctx) {
    refreshDatabaseGauges();
    ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(registry.scrape());
  }

  private void refreshDatabaseGauges() {
    long now = System.currentTimeMillis();
    if (now - runsRefreshedAt >= RUNS_REFRESH_MS) {
      runsRefreshedAt = now;
      refreshRuns();
    }
    if (now - queuesRefreshedAt >= QUEUES_REFRESH_MS) {
      queuesRefreshedAt = now;
      refreshQueues();
    }
  }

  private void refreshQueues() {
    record Q(String name, long depth, long inFlight, double oldest, long dead) {}
    List<Q> queues =
        sql.list(
            "SELECT queue_name, depth, in_flight, oldest_age_seconds, dead_lettered"
                + " FROM queue.all_queue_metrics()",
            rs ->
                new Q(
                    rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getDouble(4), rs.getLong(5)));
    queueDepth.register(rows(queues, Q::name, q -> q.depth()), true);
    queueInFlight.register(rows(queues, Q::name, q -> q.inFlight()), true);
    queueOldest.register(rows(queues, Q::name, q -> q.oldest()), true);
    queueDead.register(rows(queues, Q::name, q -> q.dead()), true);
  }

  private void refreshRuns() {
    record R(String name, long running) {}
    List<R> runs =
        sql.list(
            "SELECT workflow_name, running FROM queue.workflow_running()",
            rs -> new R(rs.getString(1), rs.getLong(2)));
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    for (R r : runs) {
      rows.add(MultiGauge.Row.of(Tags.of("workflow", r.name()), r.running()));
    }
    runsInFlight.register(rows, true);
  }

  private static <T> List<MultiGauge.Row<?>> rows(
      List<T> items,
      java.util.function.Function<T, String> name,
      java.util.function.ToDoubleFunction<T> value) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    for (T item : items) {
      rows.add(MultiGauge.Row.of(Tags.of("queue", name.apply(item)), value.applyAsDouble(item)));
    }
    return rows;
  }

  // ---- WorkflowEvents

  @Override
  public void started(String workflow) {
    runsStarted
        .computeIfAbsent(
            workflow,
            w ->
                Counter.builder("workflow_runs_started")
                    .description("Runs started, by workflow")
                    .tags("workflow", w)
                    .register(registry))
        .increment();
  }

  @Override
  public void finished(String workflow, String status, Double seconds) {
    runsCompleted
        .computeIfAbsent(
            new EndKey(workflow, status),
            k ->
                Counter.builder("workflow_runs_completed")
                    .description(
                        "Runs ended, by workflow and how: completed, failed, cancelled, timed_out")
                    .tags("workflow", k.workflow(), "status", k.status())
                    .register(registry))
        .increment();
    if (seconds == null) {
      return;
    }
    runDurations
        .computeIfAbsent(
            workflow,
            w ->
                DistributionSummary.builder("workflow_run_duration")
                    .description("Run duration from start to end")
                    .baseUnit("seconds")
                    .tags("workflow", w)
                    .publishPercentileHistogram()
                    .register(registry))
        .record(seconds);
  }

  @Override
  public void signalled(String workflow, String event) {
    signals
        .computeIfAbsent(
            new SignalKey(workflow, event),
            k ->
                Counter.builder("workflow_signals")
                    .description(
                        "Signals a run took, delivered to its wait or buffered for a later one,"
                            + " by workflow and event")
                    .tags("workflow", k.workflow(), "event", k.event())
                    .register(registry))
        .increment();
  }

  @Override
  public void updated(String workflow, String update, String outcome) {
    updates
        .computeIfAbsent(
            new UpdateKey(workflow, update, outcome),
            k ->
                Counter.builder("workflow_updates")
                    .description(
                        "Updates answered, by workflow, update and outcome (completed, failed,"
                            + " refused)")
                    .tags("workflow", k.workflow(), "update", k.update(), "outcome", k.outcome())
                    .register(registry))
        .increment();
  }

  @Override
  public void stepCompleted(String workflow, String step, double seconds) {
    stepDurations
        .computeIfAbsent(
            new StepKey(workflow, step),
            k ->
                DistributionSummary.builder("workflow_step_duration")
                    .description("Step execution time reported by workers")
                    .baseUnit("seconds")
                    .tags("workflow", k.workflow(), "step", k.step())
                    .publishPercentileHistogram()
                    .register(registry))
        .record(seconds);
  }

  @Override
  public void stepRetried(String workflow, String step) {
    stepRetries
        .computeIfAbsent(
            new StepKey(workflow, step),
            k ->
                Counter.builder("workflow_step_retries")
                    .description("Steps handed back to be tried again, by workflow and step")
                    .tags("workflow", k.workflow(), "step", k.step())
                    .register(registry))
        .increment();
  }

  // ---- Sweeper.Listener

  @Override
  public void swept(Sweeper.Swept s) {
    swept.increment(s.runs());
  }
}
