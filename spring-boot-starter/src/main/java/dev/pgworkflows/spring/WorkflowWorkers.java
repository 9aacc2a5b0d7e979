package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.PgWorkflows;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerMetrics;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * A worker for every {@link Workflow} bean, started once the context has refreshed and closed when
 * it closes. Closing is the SDK's {@link Worker#close()}, for all workers at once: they take no new
 * task, steps in flight run to their end (up to {@code pgworkflows.worker.shutdown-grace-period},
 * after which their threads are interrupted and their leases left to expire, so another worker
 * continues them), and each run is handed back at its next step for another worker to continue. A
 * run whose step in flight was its last completes.
 *
 * <p>The workers close on a thread of their own, so Spring waits for them no longer than its
 * shutdown phase timeout ({@code spring.lifecycle.timeout-per-shutdown-phase}, 30 s by default) and
 * then goes on closing the context while they finish. Closing lasts up to the grace period, plus
 * {@code pgworkflows.worker.poll-wait} for a worker that long-polls (its poll in flight is not
 * cut); startup warns when that is longer than the phase timeout.
 */
public final class WorkflowWorkers implements SmartLifecycle {
  private static final Logger log = LoggerFactory.getLogger(WorkflowWorkers.class);

  private final PgWorkflowsProperties properties;
  private final ObjectProvider<Workflow<?, ?>> workflows;
  private final Duration phaseTimeout;

  /** Null unless embedded: then the workers work over its DataSource. */
  private final PgWorkflows embedded;

  /** By workflow name; kept after stop so that their counts can still be read. */
  private volatile Map<String, Worker> workers = Map.of();

  private volatile boolean running;

  /**
   * @param phaseTimeout Spring's {@code spring.lifecycle.timeout-per-shutdown-phase}, against which
   *     startup checks how long closing may take
   */
  public WorkflowWorkers(
      PgWorkflowsProperties properties,
      ObjectProvider<Workflow<?, ?>> workflows,
      Duration phaseTimeout) {
    this(properties, workflows, phaseTimeout, null);
  }

  /** As the other constructor; with {@code embedded}, the workers work over its DataSource. */
  public WorkflowWorkers(
      PgWorkflowsProperties properties,
      ObjectProvider<Workflow<?, ?>> workflows,
      Duration phaseTimeout,
      PgWorkflows embedded) {
    this.properties = properties;
    this.workflows = workflows;
    this.phaseTimeout = phaseTimeout;
    this.embedded = embedded;
  }

  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    List<Workflow<?, ?>> all = workflows.orderedStream().toList();
    Map<String, Workflow<?, ?>> byName = new LinkedHashMap<>();
    for (Workflow<?, ?> w : all) {
      if (byName.put(w.name(), w) != null) {
        throw new IllegalStateException(
            "two Workflow beans are named "
                + w.name()
                + ": one worker serves one definition of a workflow");
      }
    }
    TreeSet<String> unknown = new TreeSet<>(properties.worker().versions().keySet());
    unknown.removeAll(byName.keySet());
    if (!unknown.isEmpty()) {
      throw new IllegalStateException(
          "pgworkflows.worker.versions names "
              + unknown
              + ", for which there is no Workflow bean (there are: "
              + new TreeSet<>(byName.keySet())
              + ")");
    }
    Map<String, Worker> started = new LinkedHashMap<>();
    try {
      for (Workflow<?, ?> w : byName.values()) {
        WorkerOptions options = options(w.name());
        warnIfClosingOutlastsPhase(w.name(), options);
        started.put(w.name(), w.serve(options));
      }
    } catch (RuntimeException e) {
      closeAll(started.values());
      throw e;
    }
    workers = Map.copyOf(started);
    running = true;
    log.info(
        "serving workflows {} {}",
        started.keySet(),
        embedded != null ? "over the application's DataSource" : "at " + properties.url());
  }

  private WorkerOptions options(String workflow) {
    PgWorkflowsProperties.Worker w = properties.worker();
    WorkerOptions options =
        (embedded != null
                ? WorkerOptions.dataSource(embedded.dataSource())
                : WorkerOptions.url(properties.url()))
            .concurrency(w.concurrency())
            .pollWait(w.pollWait())
            .shutdownTimeout(w.shutdownGracePeriod());
    String token = w.tokenOr(properties.token());
    if (token != null) {
      options = options.token(token);
    }
    List<Integer> versions = w.versions().get(workflow);
    if (versions != null) {
      options = options.versions(versions.toArray(Integer[]::new));
    }
    return options;
  }

  /**
   * Closing waits the grace period for steps in flight and, when long-polling, up to pollWait for
   * the poll in flight (a stream ends when asked); past Spring's phase timeout the context closes
   * the data source and web server under steps still running.
   */
  private void warnIfClosingOutlastsPhase(String workflow, WorkerOptions options) {
    Duration closing =
        options.taskStream()
            ? options.shutdownTimeout()
            : options.shutdownTimeout().plus(options.pollWait());
    if (closing.compareTo(phaseTimeout) > 0) {
      log.warn(
          "closing the worker of {} may take {} (shutdown grace period{}), longer than"
              + " spring.lifecycle.timeout-per-shutdown-phase ({}): Spring will close the"
              + " context under steps still running; lower"
              + " pgworkflows.worker.shutdown-grace-period or raise the phase timeout",
          workflow,
          closing,
          options.taskStream() ? "" : " plus poll wait",
          phaseTimeout);
    }
  }

  @Override
  public void stop() {
    List<Worker> closing;
    synchronized (this) {
      if (!running) {
        return;
      }
      running = false;
      closing = List.copyOf(workers.values());
    }
    closeAll(closing);
  }

  @Override
  public void stop(Runnable callback) {
    // On a thread of its own: Spring bounds its wait for the callback by the phase timeout, but
    // not a stop() that blocks the thread closing the context.
    Thread t =
        new Thread(
            () -> {
              try {
                stop();
              } finally {
                callback.run();
              }
            },
            "pgworkflows-workers-stop");
    t.setDaemon(true);
    t.start();
  }

  /** Closes the workers side by side, so that their grace periods run at the same time. */
  private static void closeAll(Iterable<Worker> closing) {
    List<Thread> threads = new ArrayList<>();
    for (Worker w : closing) {
      Thread t = new Thread(w::close, "pgworkflows-worker-close");
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  /** Stops before the web server and the data source: steps in flight may still use them. */
  @Override
  public int getPhase() {
    return SmartLifecycle.DEFAULT_PHASE;
  }

  /** The workflows served, by name (empty before start). */
  public Map<String, Worker> workers() {
    return workers;
  }

  /** The counts of {@code workflow}'s worker, all zero when it has none (yet). */
  public WorkerMetrics metrics(String workflow) {
    Worker w = workers.get(workflow);
    return w != null ? w.metrics() : new WorkerMetrics(0, 0, 0, 0, 0, 0, 0);
  }
}
