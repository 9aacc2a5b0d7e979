package dev.pgworkflows.workflows.internal.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.StreamOpened;
import dev.pgworkflows.protocol.StreamRequest;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.http.StreamHeldException;
import dev.pgworkflows.workflows.internal.http.Transport;
import dev.pgworkflows.workflows.internal.link.JournalCache;
import dev.pgworkflows.workflows.internal.link.SlotReports;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes tasks from the workflow's task stream, which the server fills as tasks become due, for as
 * many as the worker reports free slots. A stream held back on the way (a buffering proxy) makes
 * the worker long-poll for a while instead ({@link #usable}).
 */
final class TaskStream extends Intake {
  private static final Logger log = LoggerFactory.getLogger(TaskStream.class);

  /**
   * The server writes a stream line at least every second; a stream silent this long is broken, or
   * held back on the way if its first line never came.
   */
  static final Duration SILENCE = Duration.ofSeconds(5);

  /**
   * After a stream was held back on the way, the worker long-polls this long before it tries again.
   */
  static final Duration POLL_AFTER_HELD = Duration.ofMinutes(10);

  /** The stream open now, or null. */
  private volatile String streamId;

  // The intake thread's own.
  private long pollUntilNanos = System.nanoTime();

  private final Transport transport;

  TaskStream(
      String workflow,
      List<Integer> versions,
      WorkerOptions options,
      Transport transport,
      Slots slots,
      Runners runners,
      Backoff backoff,
      BooleanSupplier stopping) {
    super(workflow, "/tasks/stream", versions, options, slots, runners, backoff, stopping);
    this.transport = transport;
  }

  /** False for a while after a stream was held back on the way. */
  boolean usable() {
    return System.nanoTime() - pollUntilNanos >= 0;
  }

  /**
   * Reads one task stream: it lasts {@code pollWait} and carries tasks for the slots this worker
   * reports free.
   */
  @Override
  public void take() {
    try {
      StreamRequest req =
          new StreamRequest(
              versions,
              Math.min(1000, options.concurrency()),
              (int) Math.max(1, options.pollWait().toSeconds()),
              TaskWorker.seconds(options.lease()),
              JournalCache.INLINE_MAX);
      transport.stream(path, req, SILENCE, this::line);
      backoff.reset();
    } catch (StreamHeldException e) {
      // It took no task: a stream sends none before the report its id would have brought.
      log.warn(
          "the task stream of {} was held back on the way ({}): a proxy that buffers answers?"
              + " (nginx: proxy_buffering off). Long-polling for {} instead",
          workflow,
          e.getMessage(),
          POLL_AFTER_HELD);
      pollUntilNanos = System.nanoTime() + POLL_AFTER_HELD.toNanos();
    } catch (ServerUnavailableException | ApiException e) {
      if (!stopping.getAsBoolean()) {
        log.warn(
            "the task stream of {} failed ({}); retrying in {} ms",
            workflow,
            e.getMessage(),
            backoff.nextMs());
        backoff.pause();
      }
    } catch (RuntimeException e) {
      log.error("the task stream of {} failed unexpectedly", workflow, e);
      backoff.pause();
    } finally {
      streamId = null;
      slots.streamEnded();
    }
  }

  /**
   * One line of the stream: its id, or tasks, each dispatched as soon as a slot is free. Tasks are
   * read by the worker's own reader ({@link Task#of}), not bound as the protocol's records.
   */
  private void line(JsonNode line) {
    if (line.hasNonNull("stream")) {
      String id = Transport.read(line, StreamOpened.class).stream();
      streamId = id;
      slots.streamOpened(id);
      if (stopping.getAsBoolean()) {
        end(id); // the worker began to close while the stream opened
      } else {
        begin(id);
      }
      return;
    }
    JsonNode node = line.get("tasks");
    if (node == null || node.isEmpty()) {
      return;
    }
    List<Task> tasks = Task.all(node);
    slots.streamed(tasks.size());
    for (Task task : tasks) {
      slots.acquire();
      runners.dispatch(task);
    }
  }

  /**
   * Sends a new stream's first slot report, which shows the server that the stream reaches this
   * worker as it is written: a stream sends nothing before it.
   */
  private void begin(String id) {
    try {
      transport.post(path + "/" + id + "/slots", null, SlotReports.HEADER, slots.report(0));
    } catch (RuntimeException e) {
      // The stream then carries nothing; it ends in its time, and the next one begins afresh.
      log.debug("could not begin the task stream of {}: {}", workflow, e.getMessage());
    }
  }

  /** Asks the server to end a stream: it writes what it holds and hands back what comes later. */
  private void end(String id) {
    try {
      transport.delete(path + "/" + id);
    } catch (RuntimeException e) {
      log.debug("could not end the task stream of {}: {}", workflow, e.getMessage());
    }
  }

  /**
   * Ends the open stream, if any. It is not cut: the server may already have leased tasks to it,
   * which would then be stranded until their lease ran out; what comes is handed straight back.
   */
  @Override
  public void stop() {
    String open = streamId;
    if (open != null) {
      end(open);
    }
  }
}
