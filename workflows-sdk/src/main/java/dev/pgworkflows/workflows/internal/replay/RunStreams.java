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
 * index within the attempt (counted in a thread-local that {@link #inStep} sets around each
 * attempt), a body's write by {@code ""} and its index among the body's writes (counted here, from
 * 0 on every replay, so a replay repeats the same identities and the server skips them).
 */
final class RunStreams {
  /** The largest value of an entry, as compact JSON. */
  static final int MAX_VALUE_BYTES = 64 * 1024;

  /** The writes of the step attempt running on this thread; null outside steps. */
  private static final ThreadLocal<StepWrites> STEP = new ThreadLocal<>();

  private final Lease lease;
  private final Map<String, RunStream> streams = new ConcurrentHashMap<>();
  private int bodyWrites;

  RunStreams(Lease lease) {
    this.lease = lease;
  }

  /** One attempt's writes: the step's name and the index its next write takes. */
  private static final class StepWrites {
    final String step;
    int next;

    StepWrites(String step) {
      this.step = step;
    }
  }

  /** Step code whose stream writes, on this thread, count as one attempt of {@code step}. */
  static <T> StepContext.Fn<T> inStep(String step, StepContext.Fn<T> fn) {
    return () -> {
      StepWrites outer = STEP.get();
      STEP.set(new StepWrites(step));
      try {
        return fn.call();
      } finally {
        STEP.set(outer);
      }
    };
  }

  RunStream stream(String name) {
    if (!Names.isStreamName(name)) {
      throw new IllegalArgumentException(
          "stream name \""
              + name
              + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\"");
    }
    return streams.computeIfAbsent(name, Stream::new);
  }

  private synchronized int nextBodyWrite() {
    return bodyWrites++;
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
      StepWrites step = STEP.get();
      StreamWrite.Entry entry =
          step != null
              ? new StreamWrite.Entry(step.step, step.next++, json)
              : new StreamWrite.Entry("", nextBodyWrite(), json);
      lease.writeStream(name, new StreamWrite(List.of(entry), null));
    }

    @Override
    public void close() {
      lease.writeStream(name, new StreamWrite(List.of(), true));
    }
  }
}
