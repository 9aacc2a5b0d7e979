package dev.pgworkflows.server;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything the server reads from its environment, with defaults. Validated on construction so a
 * bad setting fails at start with the variable's name, not later with a stack trace.
 *
 * @param port HTTP port ({@code WORKFLOWS_PORT}, default 7700; 0 picks a free one)
 * @param databaseUrl JDBC or {@code postgresql://} URL; empty starts embedded PostgreSQL
 * @param dataDir where embedded PostgreSQL keeps its data ({@code WORKFLOWS_DATA_DIR})
 * @param apiTokens accepted bearer tokens; empty means presence-only mode
 */
public record ServerConfig(
    int port,
    Optional<String> databaseUrl,
    Optional<String> databaseUser,
    Optional<String> databasePassword,
    Path dataDir,
    int embeddedPostgresPort,
    List<String> apiTokens,
    long maxBodyBytes,
    int poolSize,
    int maxRetentionDays,
    long sweeperIntervalMs,
    long fallbackPollMs,
    int deliveryMaxAttempts,
    long deliveryTimeoutMs,
    long deliveryBackoffMs) {

  public ServerConfig {
    range("WORKFLOWS_PORT", port, 0, 65535);
    range("WORKFLOWS_EMBEDDED_PG_PORT", embeddedPostgresPort, 0, 65535);
    range("WORKFLOWS_MAX_BODY_BYTES", maxBodyBytes, 1024, 64L * 1024 * 1024);
    range("WORKFLOWS_DB_POOL_SIZE", poolSize, 2, 500);
    range("WORKFLOWS_MAX_RETENTION_DAYS", maxRetentionDays, 1, 36500);
    range("WORKFLOWS_SWEEPER_INTERVAL_MS", sweeperIntervalMs, 10, 86_400_000);
    range("WORKFLOWS_FALLBACK_POLL_MS", fallbackPollMs, 10, 600_000);
    range("WORKFLOWS_DELIVERY_MAX_ATTEMPTS", deliveryMaxAttempts, 1, 100);
    range("WORKFLOWS_DELIVERY_TIMEOUT_MS", deliveryTimeoutMs, 10, 600_000);
    range("WORKFLOWS_DELIVERY_BACKOFF_MS", deliveryBackoffMs, 1, 3_600_000);
    apiTokens = List.copyOf(apiTokens);
  }

  /** Reads the process environment. */
  public static ServerConfig fromEnvironment() {
    return from(System.getenv());
  }

  /** Reads the given variables; unknown ones are ignored. */
  public static ServerConfig from(Map<String, String> env) {
    Optional<String> url =
        nonBlank(env.get("WORKFLOWS_DATABASE_URL")).or(() -> nonBlank(env.get("DATABASE_URL")));
    return new ServerConfig(
        integer(env, "WORKFLOWS_PORT", 7700),
        url,
        nonBlank(env.get("WORKFLOWS_DATABASE_USER")).or(() -> nonBlank(env.get("PGUSER"))),
        nonBlank(env.get("WORKFLOWS_DATABASE_PASSWORD")).or(() -> nonBlank(env.get("PGPASSWORD"))),
        Path.of(env.getOrDefault("WORKFLOWS_DATA_DIR", "./.workflows")),
        integer(env, "WORKFLOWS_EMBEDDED_PG_PORT", 7701),
        tokens(env.get("WORKFLOWS_API_TOKENS")),
        longValue(env, "WORKFLOWS_MAX_BODY_BYTES", 1024 * 1024),
        integer(env, "WORKFLOWS_DB_POOL_SIZE", 20),
        integer(env, "WORKFLOWS_MAX_RETENTION_DAYS", 365),
        longValue(env, "WORKFLOWS_SWEEPER_INTERVAL_MS", 300_000),
        longValue(env, "WORKFLOWS_FALLBACK_POLL_MS", 2_000),
        integer(env, "WORKFLOWS_DELIVERY_MAX_ATTEMPTS", 8),
        longValue(env, "WORKFLOWS_DELIVERY_TIMEOUT_MS", 10_000),
        longValue(env, "WORKFLOWS_DELIVERY_BACKOFF_MS", 1_000));
  }

  /** A copy with another database URL and credentials. */
  public ServerConfig withDatabase(String url, String user, String password) {
    return new ServerConfig(
        port,
        Optional.of(url),
        Optional.ofNullable(user),
        Optional.ofNullable(password),
        dataDir,
        embeddedPostgresPort,
        apiTokens,
        maxBodyBytes,
        poolSize,
        maxRetentionDays,
        sweeperIntervalMs,
        fallbackPollMs,
        deliveryMaxAttempts,
        deliveryTimeoutMs,
        deliveryBackoffMs);
  }

  private static List<String> tokens(String raw) {
    if (raw == null || raw.isBlank()) {
      return List.of();
    }
    return List.of(raw.split(",")).stream().map(String::strip).filter(t -> !t.isEmpty()).toList();
  }

  private static Optional<String> nonBlank(String v) {
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.strip());
  }

  private static int integer(Map<String, String> env, String name, int dflt) {
    long v = longValue(env, name, dflt);
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(name + " is out of range: " + v);
    }
    return (int) v;
  }

  private static long longValue(Map<String, String> env, String name, long dflt) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    try {
      return Long.parseLong(v.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a whole number, got \"" + v + "\"", e);
    }
  }

  private static void range(String name, long v, long lo, long hi) {
    if (v < lo || v > hi) {
      throw new IllegalArgumentException(
          name + " must be between " + lo + " and " + hi + ", got " + v);
    }
  }
}
