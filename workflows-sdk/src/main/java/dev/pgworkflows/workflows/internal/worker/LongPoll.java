package dev.pgworkflows.workflows.internal.worker;

import dev.pgworkflows.protocol.PollRequest;
import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.internal.http.ServerUnavailableException;
import dev.pgworkflows.workflows.internal.link.JournalCache;
import dev.pgworkflows.workflows.internal.link.WorkerTransport;
import dev.pgworkflows.workflows.internal.replay.Task;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Takes tasks by long polls, each for as many tasks as there are free slots (at most 100). */
final class LongPoll extends Intake {
  private static final Logger log = LoggerFactory.getLogger(LongPoll.class);
  private static final int MAX_PER_POLL = 100;

  /** Whether a poll is out: the tasks it brings fill the slots it reserved. */
  private volatile boolean inFlight;

  private final WorkerTransport transport;

  LongPoll(
      String workflow,
      List<Integer> versions,
      WorkerOptions options,
      WorkerTransport transport,
      Slots slots,
      Runners runners,
      Backoff backoff,
      BooleanSupplier stopping) {
    super(workflow, "/tasks/poll", versions, options, slots, runners, backoff, stopping);
    this.transport = transport;
  }

  /** Whether a poll is out for the free slots. */
  boolean inFlight() {
    return inFlight;
  }

  /** One long poll for as many tasks as there are free slots. */
  @Override
  public void take() {
    int taken = 0;
    try {
      taken = slots.reserve(MAX_PER_POLL);
      if (taken == 0) {
        return;
      }
      PollRequest req =
          new PollRequest(
              versions,
              taken,
              (int) options.pollWait().toSeconds(),
              TaskWorker.seconds(options.lease()),
              JournalCache.INLINE_MAX);
      List<Task> tasks;
      inFlight = true;
      try {
        tasks = transport.poll(workflow, req, options.pollWait().plus(Duration.ofSeconds(15)));
      } finally {
        inFlight = false;
      }
      backoff.reset();
      if (taken > tasks.size()) {
        slots.unreserve(taken - tasks.size());
      }
      taken = 0;
      for (Task task : tasks) {
        runners.dispatch(task);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      slots.unreserve(taken);
    } catch (ServerUnavailableException | ApiException e) {
      slots.unreserve(taken);
      if (!stopping.getAsBoolean()) {
        log.warn(
            "polling {} failed ({}); retrying in {} ms",
            workflow,
            e.getMessage(),
            backoff.nextMs());
        backoff.pause();
      }
    } catch (RuntimeException e) {
      slots.unreserve(taken);
      log.error("polling {} failed unexpectedly", workflow, e);
      backoff.pause();
    }
  }

  @Override
  public void stop() {
    // A poll in flight is not cut: the server may already have leased tasks to it. It returns
    // within pollWait, and the runners hand back whatever it brings. A poll waiting on the engine
    // in this process answers at once, with nothing.
    transport.stopPolling(workflow);
  }
}
