package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.UUID;

/**
 * Options of an update ({@link WorkflowClient#update}), made with {@link #builder()}: how long the
 * caller waits for the answer (default a minute), and the idempotency key that makes the update one
 * however often it is sent (default a new random key per call, so a call that is retried after a
 * lost answer does not send it twice).
 */
public final class UpdateOptions {
  /** A minute's wait and a key of its own. */
  static final UpdateOptions DEFAULT = builder().build();

  private final Duration timeout;
  private final String idempotencyKey;

  private UpdateOptions(Builder b) {
    this.timeout = b.timeout;
    this.idempotencyKey = b.idempotencyKey;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** How long the caller waits for the answer. */
  public Duration timeout() {
    return timeout;
  }

  /** The key the update is sent with: the one given, or a new one for each call. */
  String keyForCall() {
    return idempotencyKey != null ? idempotencyKey : UUID.randomUUID().toString();
  }

  /** Builds {@link UpdateOptions}. */
  public static final class Builder {
    private Duration timeout = Duration.ofMinutes(1);
    private String idempotencyKey;

    private Builder() {}

    /**
     * Waits up to {@code timeout} (zero to a day) for the answer; longer: UpdatePendingException.
     */
    public Builder timeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException("timeout must be between zero and a day");
      }
      this.timeout = timeout;
      return this;
    }

    /** Makes a repeat with {@code key} (1 to 255 characters) answer the first update. */
    public Builder idempotencyKey(String key) {
      if (key == null || key.isEmpty() || key.codePointCount(0, key.length()) > 255) {
        throw new IllegalArgumentException("idempotencyKey must be 1 to 255 characters");
      }
      this.idempotencyKey = key;
      return this;
    }

    public UpdateOptions build() {
      return new UpdateOptions(this);
    }
  }
}
