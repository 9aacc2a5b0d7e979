package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.protocol.JournalOutcome;
import dev.pgworkflows.protocol.StepRecord;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal writes of a parallel group's branches, coalesced: a finished branch's record is
 * queued, and while no request is on its way the branch's thread sends whatever is queued in one
 * request, then what was queued meanwhile, until the queue is empty. So fast branches share
 * requests and transactions, and a request is never held back waiting for company. Once one write
 * finds the lease lost, nothing more is sent.
 */
final class BranchWrites {
  private static final Logger log = LoggerFactory.getLogger(BranchWrites.class);

  /** The most steps one request carries (the route's limit). */
  static final int MAX_STEPS = 1000;

  /** About the most bytes of outputs and errors one request carries, well under a body's limit. */
  static final int MAX_BYTES = 256 * 1024;

  private final Lease lease;
  private final CompletionHook hook;
  private final ArrayDeque<Queued> queued = new ArrayDeque<>();
  private final List<StepRecord> written = new ArrayList<>();
  private boolean sending;
  private boolean lost;
  private int unsettled;

  /** A record waiting to be sent, with its size as far as a batch's limit goes. */
  private record Queued(StepRecord step, int bytes) {}

  BranchWrites(Lease lease, CompletionHook hook) {
    this.lease = lease;
    this.hook = hook;
  }

  /**
   * Queues a finished branch's record, and sends it (with whatever else is queued by then) unless a
   * request is on its way, whose sender sends it next.
   */
  void submit(StepRecord step) {
    int bytes = step.name().length() + size(step.output()) + size(step.error());
    synchronized (this) {
      queued.add(new Queued(step, bytes));
      unsettled++;
      if (sending) {
        return;
      }
      sending = true;
    }
    send();
  }

  private static int size(Object json) {
    return json == null ? 0 : json.toString().length();
  }

  /** Sends batches until nothing is queued. */
  private void send() {
    while (true) {
      List<StepRecord> batch = new ArrayList<>();
      synchronized (this) {
        if (lost) {
          unsettled -= queued.size();
          queued.clear();
        }
        if (queued.isEmpty()) {
          sending = false;
          notifyAll();
          return;
        }
        int bytes = 0;
        while (!queued.isEmpty()
            && batch.size() < MAX_STEPS
            && (batch.isEmpty() || bytes + queued.peek().bytes() <= MAX_BYTES)) {
          Queued q = queued.poll();
          bytes += q.bytes();
          batch.add(q.step());
        }
      }
      boolean ok = write(batch);
      synchronized (this) {
        if (ok) {
          written.addAll(batch);
        } else {
          lost = true;
        }
        unsettled -= batch.size();
        notifyAll();
      }
      if (ok) {
        for (StepRecord s : batch) {
          hook.completionCommitted(s.name());
        }
      }
    }
  }

  /** Journals a batch; false when the lease was lost (or the write could not be made). */
  private boolean write(List<StepRecord> batch) {
    try {
      JournalOutcome answer = lease.journal(batch);
      return "ok".equals(answer.outcome());
    } catch (Suspend s) {
      return false;
    } catch (RuntimeException e) {
      log.warn("could not journal {} parallel steps: {}", batch.size(), e.toString());
      return false;
    }
  }

  /**
   * Waits until every record submitted is written (or dropped); returns them in the order they were
   * journaled. Throws {@link Suspend} when the lease was lost on the way.
   */
  synchronized List<StepRecord> awaitWritten() throws InterruptedException {
    while (unsettled > 0 || sending) {
      wait();
    }
    if (lost) {
      throw new Suspend(Suspend.Why.LEASE_LOST);
    }
    return List.copyOf(written);
  }
}
