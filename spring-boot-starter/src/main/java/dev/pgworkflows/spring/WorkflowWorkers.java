package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerMetrics;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
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
 * run whose step in flight was its last completes. Spring waits for it within its own shutdown
 * phase timeout ({@code spring.lifecycle.timeout-per-shutdown-phase}, 30 s by default).
 */
public final class WorkflowWorkers implements SmartLifecycle {
  private static final Logger log = LoggerFactory.getLogger(WorkflowWorkers.class);

  private final PgWorkflowsProperties properties;
  private final ObjectProvider<Workflow<?, ?>> workflows;

  /** By workflow name; kept after stop so that their counts can still be read. */
  private volatile Map<String, Worker> workers = Map.of();

  private volatile boolean running;

  public WorkflowWorkers(
      PgWorkflowsProperties properties, ObjectProvider<Workflow<?, ?>> workflows) {
    this.properties = properties;
    this.workflows = workflows;
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
        started.put(w.name(), w.serve(options(w.name())));
      }
    } catch (RuntimeException e) {
      closeAll(started.values());
      throw e;
    }
    workers = Map.copyOf(started);
    running = true;
    log.info("serving workflows {} at {}", started.keySet(), properties.url());
  }

  private WorkerOptions options(String workflow) {
    PgWorkflowsProperties.Worker w = properties.worker();
    WorkerOptions options =
        WorkerOptions.url(properties.url())
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
    stop();
    callback.run();
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
