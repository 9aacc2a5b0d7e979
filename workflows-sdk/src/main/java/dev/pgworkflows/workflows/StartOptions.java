package dev.pgworkflows.workflows;

/**
 * Options of a start. An idempotency key makes repeated starts return the first run; a version pins
 * the run to that code version (default: the newest a worker serves); retention overrides the
 * default 30 days, clamped by the server's ceiling.
 */
public record StartOptions(String idempotencyKey, Integer version, Integer retentionDays) {
  public static final StartOptions NONE = new StartOptions(null, null, null);

  public StartOptions {
    if (idempotencyKey != null && (idempotencyKey.isEmpty() || idempotencyKey.length() > 255)) {
      throw new IllegalArgumentException("idempotency key must be 1 to 255 characters");
    }
    if (version != null && version < 1) {
      throw new IllegalArgumentException("version must be >= 1");
    }
    if (retentionDays != null && retentionDays < 1) {
      throw new IllegalArgumentException("retention must be at least one day");
    }
  }

  public static StartOptions idempotencyKey(String key) {
    return new StartOptions(key, null, null);
  }

  public StartOptions withIdempotencyKey(String key) {
    return new StartOptions(key, version, retentionDays);
  }

  public StartOptions withVersion(int v) {
    return new StartOptions(idempotencyKey, v, retentionDays);
  }

  public StartOptions withRetentionDays(int days) {
    return new StartOptions(idempotencyKey, version, days);
  }
}
