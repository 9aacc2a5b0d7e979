package dev.pgworkflows.workflows.internal.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.internal.http.Completions;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.http.StreamHeldException;
import dev.pgworkflows.workflows.internal.http.StreamSlots;
import dev.pgworkflows.workflows.internal.http.TakeBack;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code workflow.serve()}: one thread reads the workflow's task stream, which the server fills as
 * tasks become due for as many as the worker has free slots, or, without {@link
 * WorkerOptions#taskStream} or while streams are held back on the way, long-polls for as many tasks
 * as there are free slots; a pool runs them. A run's last completion may bring back the next task
 * for its slot, which its thread runs next. When the server is unreachable it backs off and tries
 * again; leased tasks it could not finish come back to some worker when their lease runs out.
 */
public final class TaskWorker<I, O> implements Worker {
  private static final Logger log = LoggerFactory.getLogger(TaskWorker.class);

  /**
   * The server writes a stream line at least every second; a stream silent this long is broken, or
   * held back on the way if its first line never came.
   */
  static final Duration STREAM_SILENCE = Duration.ofSeconds(5);

  /**
   * After a stream was held back on the way, the worker long-polls this long before it tries again.
   */
  static final Duration POLL_AFTER_HELD = Duration.ofMinutes(10);

  private final Workflow<I, O> workflow;

  /** Whether this worker reads task streams (the default) or long-polls. */
  private final boolean stream;

  private final WorkerOptions options;
  private final Transport transport;
  private final Completions completions;
  private final Semaphore slots;
  private final ExecutorService runners;
  private final ScheduledExecutorService heartbeats;
  private final TaskRunner<I, O> runner;
  private final Thread poller;
  private final AtomicInteger inFlight = new AtomicInteger();

  /** Tasks a runner thread's last completion brought back for its slot, run next on that thread. */
  private final ThreadLocal<ArrayDeque<Task>> handed = ThreadLocal.withInitial(ArrayDeque::new);

  private volatile boolean stopping;
  private volatile boolean polling;

  /** Whether the worker takes its tasks by stream now. */
  private volatile boolean streaming;

  // The poller thread's own.
  private long backoffMs = 100;
  private long pollUntilNanos = System.nanoTime();

  /** The worker's slots as its task stream knows them. */
  private final StreamSlots streamSlots;

  /** The task stream open now, or null. */
  private volatile String streamId;

  private TaskWorker(Workflow<I, O> workflow, WorkerOptions options) {
    this.workflow = workflow;
    this.options = options;
    this.stream = options.taskStream();
    this.transport = new Transport(options.url(), options.token());
    this.slots = new Semaphore(options.concurrency());
    this.streamSlots = new StreamSlots(options.concurrency());
    this.completions =
        new Completions(
            transport,
            workflow.name(),
            new TakeBack(
                versions(),
                options.lease().toSeconds(),
                // Only a saturated worker asks: while a slot is free, its stream (or a poll) is
                // out for it, and takes whatever is due.
                () -> !stopping && (streaming || !polling) && slots.availablePermits() == 0,
                node -> handed.get().add(Task.of(node))),
            stream ? streamSlots : null);
    AtomicInteger n = new AtomicInteger();
    this.runners =
        Executors.newFixedThreadPool(
            options.concurrency(),
            r -> {
              Thread t = new Thread(r, "wf-" + workflow.name() + "-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.heartbeats =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "wf-" + workflow.name() + "-lease");
              t.setDaemon(true);
              return t;
            });
    this.runner =
        new TaskRunner<>(
            workflow,
            transport,
            completions,
            heartbeats,
            options.lease(),
            () -> stopping,
            (options.openTelemetry() != null
                    ? options.openTelemetry()
                    : io.opentelemetry.api.GlobalOpenTelemetry.get())
                .getTracer("dev.pgworkflows.workflows"));
    this.poller = new Thread(this::takeTasks, "wf-" + workflow.name() + "-poll");
    this.poller.setDaemon(true);
  }

  public static <I, O> Worker start(Workflow<I, O> workflow, WorkerOptions options) {
    TaskWorker<I, O> w = new TaskWorker<>(workflow, options);
    w.poller.start();
    return w;
  }

  private List<Integer> versions() {
    return options.versions() != null ? options.versions() : List.of(workflow.version());
  }

  /**
   * Takes tasks until the worker closes: reads task streams, one after another, or long-polls when
   * the worker does not stream or a stream was lately held back on the way.
   */
  private void takeTasks() {
    while (!stopping && !Thread.currentThread().isInterrupted()) {
      streaming = stream && System.nanoTime() - pollUntilNanos >= 0;
      if (streaming) {
        readStream();
      } else {
        poll();
      }
    }
  }

  /**
   * Reads one task stream: it lasts {@code pollWait} and carries tasks for the slots this worker
   * reports free.
   */
  private void readStream() {
    String path = "/v1/workflows/" + workflow.name() + "/tasks/stream";
    try {
      Map<String, Object> req = new LinkedHashMap<>();
      req.put("versions", versions());
      req.put("slots", Math.min(1000, options.concurrency()));
      req.put("seconds", Math.max(1, options.pollWait().toSeconds()));
      req.put("leaseSeconds", options.lease().toSeconds());
      transport.stream(path, req, STREAM_SILENCE, this::streamed);
      backoffMs = 100;
    } catch (StreamHeldException e) {
      // It took no task: a stream sends none before the report its id would have brought.
      log.warn(
          "the task stream of {} was held back on the way ({}): a proxy that buffers answers?"
              + " (nginx: proxy_buffering off). Long-polling for {} instead",
          workflow.name(),
          e.getMessage(),
          POLL_AFTER_HELD);
      pollUntilNanos = System.nanoTime() + POLL_AFTER_HELD.toNanos();
    } catch (ServerUnavailableException | ApiException e) {
      if (!stopping) {
        log.warn(
            "the task stream of {} failed ({}); retrying in {} ms",
            workflow.name(),
            e.getMessage(),
            backoffMs);
        backOff();
      }
    } catch (RuntimeException e) {
      log.error("the task stream of {} failed unexpectedly", workflow.name(), e);
      backOff();
    } finally {
      streamId = null;
      streamSlots.ended();
    }
  }

  private void backOff() {
    sleep(backoffMs);
    backoffMs = Math.min(backoffMs * 2, 5_000);
  }

  /** One line of the task stream: its id, or tasks, each run as soon as a slot is free. */
  private void streamed(JsonNode line) {
    if (line.hasNonNull("stream")) {
      streamId = line.get("stream").asText();
      streamSlots.opened(streamId);
      if (stopping) {
        endStream(streamId); // the worker began to close while the stream opened
      } else {
        beginStream(streamId);
      }
      return;
    }
    JsonNode node = line.get("tasks");
    if (node == null || node.isEmpty()) {
      return;
    }
    List<Task> tasks = Task.all(node);
    streamSlots.received(tasks.size());
    for (Task task : tasks) {
      slots.acquireUninterruptibly();
      dispatch(task);
    }
  }

  /**
   * Runs a task on a runner thread, holding a slot the caller took; the thread then runs the tasks
   * its completions brought back for that slot, and frees it.
   */
  private void dispatch(Task task) {
    inFlight.incrementAndGet();
    runners.execute(
        () -> {
          try {
            ArrayDeque<Task> more = handed.get();
            for (Task next = task; next != null; next = more.poll()) {
              if (stopping) {
                runner.release(next);
              } else {
                runner.run(next);
              }
            }
          } finally {
            inFlight.decrementAndGet();
            streamSlots.freed();
            slots.release();
          }
        });
  }

  /**
   * Sends a new stream's first slot report, which shows the server that the stream reaches this
   * worker as it is written: a stream sends nothing before it.
   */
  private void beginStream(String id) {
    try {
      transport.post(
          "/v1/workflows/" + workflow.name() + "/tasks/stream/" + id + "/slots",
          null,
          StreamSlots.HEADER,
          streamSlots.report(0));
    } catch (RuntimeException e) {
      // The stream then carries nothing; it ends in its time, and the next one begins afresh.
      log.debug("could not begin the task stream of {}: {}", workflow.name(), e.getMessage());
    }
  }

  /** Asks the server to end a stream: it writes what it holds and hands back what comes later. */
  private void endStream(String id) {
    try {
      transport.delete("/v1/workflows/" + workflow.name() + "/tasks/stream/" + id);
    } catch (RuntimeException e) {
      log.debug("could not end the task stream of {}: {}", workflow.name(), e.getMessage());
    }
  }

  /** One long poll for as many tasks as there are free slots. */
  private void poll() {
    String path = "/v1/workflows/" + workflow.name() + "/tasks/poll";
    int taken = 0;
    try {
      if (!slots.tryAcquire(1, TimeUnit.SECONDS)) {
        return;
      }
      taken = 1 + slots.drainPermits();
      int max = Math.min(taken, 100);
      if (taken > max) {
        slots.release(taken - max);
        taken = max;
      }
      Map<String, Object> req = new LinkedHashMap<>();
      req.put("versions", versions());
      req.put("max", max);
      req.put("waitSeconds", options.pollWait().toSeconds());
      req.put("leaseSeconds", options.lease().toSeconds());
      JsonNode resp;
      polling = true;
      try {
        resp = transport.send("POST", path, req, options.pollWait().plus(Duration.ofSeconds(15)));
      } finally {
        polling = false;
      }
      backoffMs = 100;
      List<Task> tasks = Task.all(resp.get("tasks"));
      if (taken > tasks.size()) {
        slots.release(taken - tasks.size());
      }
      taken = 0;
      for (Task task : tasks) {
        dispatch(task);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      slots.release(taken);
    } catch (ServerUnavailableException | ApiException e) {
      slots.release(taken);
      if (!stopping) {
        log.warn(
            "polling {} failed ({}); retrying in {} ms",
            workflow.name(),
            e.getMessage(),
            backoffMs);
        backOff();
      }
    } catch (RuntimeException e) {
      slots.release(taken);
      log.error("polling {} failed unexpectedly", workflow.name(), e);
      backOff();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public int inFlight() {
    return inFlight.get();
  }

  @Override
  public void close() {
    if (stopping) {
      return;
    }
    stopping = true;
    String open = streamId;
    if (open != null) {
      endStream(open);
    }
    try {
      // The stream ends as asked, or the poll in flight returns within pollWait: neither is cut,
      // because the server may already have leased tasks to it, which would then be stranded until
      // their lease ran out. Whatever comes is handed straight back.
      poller.join(options.pollWait().plusSeconds(20).toMillis());
      if (poller.isAlive()) {
        poller.interrupt();
      }
      runners.shutdown();
      if (!runners.awaitTermination(options.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn(
            "{} runs still in flight after {}; their leases will expire and another worker"
                + " continues them",
            inFlight.get(),
            options.shutdownTimeout());
        runners.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      heartbeats.shutdownNow();
      completions.close();
    }
  }
}
