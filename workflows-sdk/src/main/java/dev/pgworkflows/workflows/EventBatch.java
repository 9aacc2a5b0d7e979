package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a workflow subscription batches published messages ({@link Topics#subscribe(String, String,
 * EventBatch)}): one run per batch of up to {@code maxSize} messages, or {@code timeout} after the
 * batch's first message however few it holds, one batch per value at {@link #key} when given; the
 * run's input is the messages' bodies as an array, oldest first. Immutable.
 */
public final class EventBatch {
  private final int maxSize;
  private final Duration timeout;
  private final String key;

  private EventBatch(int maxSize, Duration timeout, String key) {
    this.maxSize = maxSize;
    this.timeout = timeout;
    this.key = key;
  }

  /** Up to {@code maxSize} messages (1 to 1000), or {@code timeout} (up to a day). */
  public static EventBatch of(int maxSize, Duration timeout) {
    if (maxSize < 1 || maxSize > 1000) {
      throw new IllegalArgumentException("maxSize must be between 1 and 1000, got " + maxSize);
    }
    if (timeout == null || timeout.toMillis() < 1 || timeout.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("timeout must be between a millisecond and a day");
    }
    return new EventBatch(maxSize, timeout, null);
  }

  /** One batch per value at {@code path}, a JSON path into the message such as {@code $.user}. */
  public EventBatch key(String path) {
    if (path == null || !path.startsWith("$") || path.length() > 255) {
      throw new IllegalArgumentException(
          "key must be a JSON path of at most 255 characters, such as $.customerId");
    }
    return new EventBatch(maxSize, timeout, path);
  }

  public int maxSize() {
    return maxSize;
  }

  public Duration timeout() {
    return timeout;
  }

  public Optional<String> key() {
    return Optional.ofNullable(key);
  }

  dev.pgworkflows.protocol.EventBatch wire() {
    return new dev.pgworkflows.protocol.EventBatch(maxSize, timeout.toMillis(), key);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EventBatch b
        && b.maxSize == maxSize
        && b.timeout.equals(timeout)
        && Objects.equals(b.key, key);
  }

  @Override
  public int hashCode() {
    return Objects.hash(maxSize, timeout, key);
  }

  @Override
  public String toString() {
    return "EventBatch[" + maxSize + " or " + timeout + (key == null ? "]" : ", key " + key + "]");
  }
}
