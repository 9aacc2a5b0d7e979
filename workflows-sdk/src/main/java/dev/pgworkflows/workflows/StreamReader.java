package dev.pgworkflows.workflows;

import dev.pgworkflows.workflows.internal.http.EventStream;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.lang.reflect.Type;
import java.time.Instant;
import java.util.Iterator;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A run's stream read from an offset and followed live ({@link Runs#stream}): iterating yields each
 * entry as it is written and ends once the stream is closed or the run has ended and every entry
 * was read. A dropped connection is resumed from the last entry read, so no entry is skipped or
 * repeated; after a minute without reaching the server the iteration throws {@link
 * WorkflowException}. Each iteration reads on its own connection; an iteration left before its end
 * holds its connection until {@link #close}. Immutable: {@link #from} makes another reader.
 */
public final class StreamReader<T> implements Iterable<StreamReader.Entry<T>>, AutoCloseable {
  /** One entry: its offset in the stream (dense from 0), its value, when it was written. */
  public record Entry<T>(long offset, T value, Instant writtenAt) {}

  private final Transport transport;
  private final String path;
  private final Type type;
  private final long from;
  private final java.util.List<EventStream<Entry<T>>> open =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());

  StreamReader(Transport transport, String path, Type type, long from) {
    this.transport = transport;
    this.path = path;
    this.type = type;
    this.from = from;
  }

  /** A reader of the same stream that starts at {@code offset}. */
  public StreamReader<T> from(long offset) {
    if (offset < 0) {
      throw new IllegalArgumentException("offset must be 0 or more, got " + offset);
    }
    return new StreamReader<>(transport, path, type, offset);
  }

  @Override
  public Iterator<Entry<T>> iterator() {
    EventStream<Entry<T>> events = new EventStream<>(transport, path, from, this::entry, type);
    // Iterations that ended hold nothing: forget them, so a reader iterated again and again
    // keeps only those still open.
    synchronized (open) {
      open.removeIf(EventStream::isDone);
      open.add(events);
    }
    return events;
  }

  @SuppressWarnings("unchecked")
  private Entry<T> entry(long offset, Object value, Instant writtenAt) {
    return new Entry<>(offset, (T) value, writtenAt);
  }

  /** The values, in order, as a stream that ends with the run's stream; close it to leave early. */
  public Stream<T> values() {
    Iterator<Entry<T>> it = iterator();
    return StreamSupport.stream(
            Spliterators.spliteratorUnknownSize(it, Spliterator.ORDERED | Spliterator.NONNULL),
            false)
        .map(Entry::value)
        .onClose(() -> ((EventStream<?>) it).close());
  }

  /** Closes the connections of iterations not yet at their end. */
  @Override
  public void close() {
    synchronized (open) {
      open.forEach(EventStream::close);
      open.clear();
    }
  }
}
