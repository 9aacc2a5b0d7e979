package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.StreamWrite;
import dev.pgworkflows.workflows.RunStream;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The streams of one replay of a run. Every write names itself: a step's write by the step and its
 * index within the attempt (counted in the {@link Attempt} that {@link Attempt#wrap} makes current
 * on the thread running it), a body's write by {@code ""} and its index among the body's writes
 * (counted here, from 0 on every replay, so a replay repeats the same identities and the server
 * skips them).
 *
 * <p>Only two kinds of thread write: the body's (the thread that made this replay and runs the
 * body) and a step attempt's own. A write from any other thread (one a step started, say) is
 * refused with {@link IllegalStateException}: counted as the body's it would take the body's next
 * index on the first execution but not on a replay, and shift every later body write onto an
 * identity already stored; passing the step's identity on to threads it starts would not hold for
 * pooled threads, which outlive the step. A thread an attempt left running once the attempt is over
 * (it timed out) is refused too, so it cannot write under the identities of the next attempt.
 */
final class RunStreams {
  /** The largest value of an entry, as compact JSON. */
  static final int MAX_VALUE_BYTES = 64 * 1024;

  /** The attempt running on this thread; null outside steps. */
  private static final ThreadLocal<Attempt> STEP = new ThreadLocal<>();

  private final Lease lease;
  private final Thread body;
  private final Runnable beforeBodyWrite;
  private final Map<String, RunStream> streams = new ConcurrentHashMap<>();
  private int bodyWrites;

  /**
   * Streams of a replay whose body runs on the calling thread; {@code beforeBodyWrite} runs before
   * each of the body's writes (it sends the held completion of the step before, so that every body
   * entry is newer than the journal rows before it and older than those after it, which a restart
   * from a step relies on).
   */
  RunStreams(Lease lease, Runnable beforeBodyWrite) {
    this.lease = lease;
    this.body = Thread.currentThread();
    this.beforeBodyWrite = beforeBodyWrite;
  }

  /**
   * One attempt of a step: its name and the index its next write takes. It is current from its
   * start until its caller stops waiting for it ({@link #end}); writes after that are refused.
   */
  static final class Attempt {
    private final String step;
    private int next;
    private boolean over;

    Attempt(String step) {
      this.step = step;
    }

    /** The step's code, whose stream writes on the thread that runs it count as this attempt's. */
    <T> StepContext.Fn<T> wrap(StepContext.Fn<T> fn) {
      return () -> {
        Attempt outer = STEP.get();
        STEP.set(this);
        try {
          return fn.call();
        } finally {
          STEP.set(outer);
        }
      };
    }

    /** The attempt is over: a write in flight finishes first, later ones are refused. */
    synchronized void end() {
      over = true;
    }

    /** The attempt current on this thread: null outside steps (the body's thread, or another). */
    static Attempt current() {
      return STEP.get();
    }

    /** The step this is an attempt of. */
    String step() {
      return step;
    }

    /** Whether the attempt's caller has stopped waiting for it (it returned or timed out). */
    synchronized boolean over() {
      return over;
    }

    /** Sends one entry under this attempt's next identity; refused once the attempt is over. */
    private synchronized void write(Lease lease, String stream, JsonNode json) {
      if (over) {
        throw new IllegalStateException(
            "step "
                + step
                + " wrote to stream "
                + stream
                + " after its attempt was over (it timed out): a thread an attempt leaves running"
                + " may not write");
      }
      lease.writeStream(
          stream, new StreamWrite(List.of(new StreamWrite.Entry(step, next, json)), null));
      next++;
    }
  }

  RunStream stream(String name) {
    if (!Names.isStreamName(name)) {
      throw new IllegalArgumentException(
          "stream name \""
              + name
              + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\", not dots"
              + " alone");
    }
    return streams.computeIfAbsent(name, Stream::new);
  }

  private final class Stream implements RunStream {
    private final String name;

    Stream(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public void write(Object value) {
      JsonNode json = Transport.JSON.valueToTree(value);
      int bytes;
      try {
        bytes = Transport.JSON.writeValueAsBytes(json).length;
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException("stream value could not be serialised", e);
      }
      if (bytes > MAX_VALUE_BYTES) {
        throw new IllegalArgumentException(
            "a stream value is at most "
                + MAX_VALUE_BYTES
                + " bytes of JSON; this one is "
                + bytes);
      }
      Attempt attempt = STEP.get();
      if (attempt != null) {
        attempt.write(lease, name, json);
        return;
      }
      if (Thread.currentThread() != body) {
        throw new IllegalStateException(
            "stream "
                + name
                + " was written from thread "
                + Thread.currentThread().getName()
                + ", neither the workflow body's nor a step's: write from the body, or from a"
                + " step's code on the thread the step runs on (not from threads it starts)");
      }
      beforeBodyWrite.run();
      // Only the body's thread counts here: no lock is needed.
      int seq = bodyWrites++;
      lease.writeStream(name, new StreamWrite(List.of(new StreamWrite.Entry("", seq, json)), null));
    }

    @Override
    public void close() {
      lease.writeStream(name, new StreamWrite(List.of(), true));
    }
  }
}
