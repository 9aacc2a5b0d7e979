package dev.pgworkflows.server;

import dev.pgworkflows.engine.internal.maintenance.WebhookTargets;
import java.net.InetAddress;
import java.net.UnknownHostException;
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
 * @param apiTokens accepted bearer tokens with their scopes ({@code WORKFLOWS_API_TOKENS}, see
 *     {@link ApiToken#parse}); empty means presence-only mode, which only a loopback bind allows
 * @param bind the address or host name the HTTP server listens on ({@code WORKFLOWS_BIND}, default
 *     {@code 127.0.0.1}); one beyond loopback ({@code 0.0.0.0}, {@code ::}, a host's address) needs
 *     tokens, or {@code insecureNoAuth}
 * @param insecureNoAuth serve beyond loopback without tokens, any bearer token passing with every
 *     scope ({@code WORKFLOWS_INSECURE_NO_AUTH=true}); the server warns at start and every hour
 * @param webhookAllow addresses, CIDR ranges and host names webhooks may reach although they are
 *     loopback, private, link-local... ({@code WORKFLOWS_WEBHOOK_ALLOW}, comma-separated)
 * @param workerExpiryMs how long a worker not seen stays in the workers listing ({@code
 *     WORKFLOWS_WORKER_EXPIRY_MS}, default 30 s)
 * @param dbStatementTimeoutMs PostgreSQL's {@code statement_timeout} on the pool's connections
 *     ({@code WORKFLOWS_DB_STATEMENT_TIMEOUT_MS}, default 30 s; 0 sets none, and then needs a
 *     socket timeout of 0 too)
 * @param maxTaskStreams task streams the server holds open at most ({@code
 *     WORKFLOWS_MAX_TASK_STREAMS}, default 5,000); one more is refused with 503. An open stream
 *     holds a connection and no thread
 * @param dbSocketTimeoutMs how long a pooled connection waits for the database's answer before it
 *     is abandoned ({@code WORKFLOWS_DB_SOCKET_TIMEOUT_MS}, default 45 s; 0 waits forever): what
 *     bounds a request when the database's host or the network to it stops answering
 */
public record ServerConfig(
    int port,
    Optional<String> databaseUrl,
    Optional<String> databaseUser,
    Optional<String> databasePassword,
    Path dataDir,
    int embeddedPostgresPort,
    List<ApiToken> apiTokens,
    String bind,
    boolean insecureNoAuth,
    long maxBodyBytes,
    int poolSize,
    int maxRetentionDays,
    long sweeperIntervalMs,
    long scheduleIntervalMs,
    long deadlineIntervalMs,
    long fallbackPollMs,
    int deliveryMaxAttempts,
    long deliveryTimeoutMs,
    long deliveryBackoffMs,
    List<String> webhookAllow,
    long workerExpiryMs,
    long dbStatementTimeoutMs,
    long dbSocketTimeoutMs,
    int maxTaskStreams) {

  public ServerConfig {
    range("WORKFLOWS_PORT", port, 0, 65535);
    range("WORKFLOWS_EMBEDDED_PG_PORT", embeddedPostgresPort, 0, 65535);
    range("WORKFLOWS_MAX_BODY_BYTES", maxBodyBytes, 1024, 64L * 1024 * 1024);
    range("WORKFLOWS_DB_POOL_SIZE", poolSize, 2, 500);
    range("WORKFLOWS_MAX_TASK_STREAMS", maxTaskStreams, 1, 100_000);
    range("WORKFLOWS_MAX_RETENTION_DAYS", maxRetentionDays, 1, 36500);
    range("WORKFLOWS_SWEEPER_INTERVAL_MS", sweeperIntervalMs, 10, 86_400_000);
    range("WORKFLOWS_SCHEDULE_INTERVAL_MS", scheduleIntervalMs, 10, 60_000);
    range("WORKFLOWS_DEADLINE_INTERVAL_MS", deadlineIntervalMs, 10, 3_600_000);
    range("WORKFLOWS_FALLBACK_POLL_MS", fallbackPollMs, 10, 600_000);
    range("WORKFLOWS_DELIVERY_MAX_ATTEMPTS", deliveryMaxAttempts, 1, 100);
    range("WORKFLOWS_DELIVERY_TIMEOUT_MS", deliveryTimeoutMs, 10, 600_000);
    range("WORKFLOWS_DELIVERY_BACKOFF_MS", deliveryBackoffMs, 1, 3_600_000);
    range("WORKFLOWS_WORKER_EXPIRY_MS", workerExpiryMs, 500, 86_400_000);
    range("WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", dbStatementTimeoutMs, 0, 86_400_000);
    range("WORKFLOWS_DB_SOCKET_TIMEOUT_MS", dbSocketTimeoutMs, 0, 86_400_000);
    if (dbSocketTimeoutMs > 0 && dbSocketTimeoutMs < 1_000) {
      throw new IllegalArgumentException(
          "WORKFLOWS_DB_SOCKET_TIMEOUT_MS must be 0 (none) or at least 1000, got "
              + dbSocketTimeoutMs);
    }
    // The database should cancel a slow statement (the connection stays usable) before the
    // socket gives up on it (the connection is thrown away).
    if (dbSocketTimeoutMs > 0
        && dbStatementTimeoutMs > 0
        && dbSocketTimeoutMs <= dbStatementTimeoutMs) {
      throw new IllegalArgumentException(
          "WORKFLOWS_DB_SOCKET_TIMEOUT_MS ("
              + dbSocketTimeoutMs
              + ") must be longer than WORKFLOWS_DB_STATEMENT_TIMEOUT_MS ("
              + dbStatementTimeoutMs
              + ")");
    }
    // Without a statement timeout a slow statement runs on until the socket gives up and throws
    // the connection away, the statement perhaps still running in the database.
    if (dbSocketTimeoutMs > 0 && dbStatementTimeoutMs == 0) {
      throw new IllegalArgumentException(
          "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS 0 (none) needs WORKFLOWS_DB_SOCKET_TIMEOUT_MS 0 (none)"
              + " too, got "
              + dbSocketTimeoutMs);
    }
    apiTokens = List.copyOf(apiTokens);
    if (bind == null || bind.isBlank()) {
      throw new IllegalArgumentException("WORKFLOWS_BIND must name an address or a host");
    }
    if (apiTokens.isEmpty() && !insecureNoAuth && !loopbackOnly(bind)) {
      throw new IllegalArgumentException(
          "WORKFLOWS_BIND="
              + bind
              + " listens beyond loopback, which needs WORKFLOWS_API_TOKENS (or"
              + " WORKFLOWS_INSECURE_NO_AUTH=true to serve without authentication)");
    }
    webhookAllow = List.copyOf(webhookAllow);
    try {
      WebhookTargets.allowing(webhookAllow, host -> new InetAddress[0]);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("WORKFLOWS_WEBHOOK_ALLOW: " + e.getMessage(), e);
    }
  }

  /** Where the server listens unless {@code WORKFLOWS_BIND} says otherwise. */
  public static final String LOOPBACK = "127.0.0.1";

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
        ApiToken.parse(env.get(ApiToken.VARIABLE)),
        nonBlank(env.get("WORKFLOWS_BIND")).orElse(LOOPBACK),
        bool(env, "WORKFLOWS_INSECURE_NO_AUTH"),
        longValue(env, "WORKFLOWS_MAX_BODY_BYTES", 1024 * 1024),
        integer(env, "WORKFLOWS_DB_POOL_SIZE", 20),
        integer(env, "WORKFLOWS_MAX_RETENTION_DAYS", 365),
        longValue(env, "WORKFLOWS_SWEEPER_INTERVAL_MS", 300_000),
        longValue(env, "WORKFLOWS_SCHEDULE_INTERVAL_MS", 1_000),
        longValue(env, "WORKFLOWS_DEADLINE_INTERVAL_MS", 1_000),
        longValue(env, "WORKFLOWS_FALLBACK_POLL_MS", 2_000),
        integer(env, "WORKFLOWS_DELIVERY_MAX_ATTEMPTS", 8),
        longValue(env, "WORKFLOWS_DELIVERY_TIMEOUT_MS", 10_000),
        longValue(env, "WORKFLOWS_DELIVERY_BACKOFF_MS", 1_000),
        tokens(env.get("WORKFLOWS_WEBHOOK_ALLOW")),
        longValue(env, "WORKFLOWS_WORKER_EXPIRY_MS", 30_000),
        longValue(env, "WORKFLOWS_DB_STATEMENT_TIMEOUT_MS", 30_000),
        longValue(env, "WORKFLOWS_DB_SOCKET_TIMEOUT_MS", 45_000),
        integer(env, "WORKFLOWS_MAX_TASK_STREAMS", 5_000));
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
        bind,
        insecureNoAuth,
        maxBodyBytes,
        poolSize,
        maxRetentionDays,
        sweeperIntervalMs,
        scheduleIntervalMs,
        deadlineIntervalMs,
        fallbackPollMs,
        deliveryMaxAttempts,
        deliveryTimeoutMs,
        deliveryBackoffMs,
        webhookAllow,
        workerExpiryMs,
        dbStatementTimeoutMs,
        dbSocketTimeoutMs,
        maxTaskStreams);
  }

  private static List<String> tokens(String raw) {
    if (raw == null || raw.isBlank()) {
      return List.of();
    }
    return List.of(raw.split(",")).stream().map(String::strip).filter(t -> !t.isEmpty()).toList();
  }

  /** Whether {@link #bind} reaches loopback addresses only (all of them, if it is a name). */
  public boolean bindsLoopbackOnly() {
    return loopbackOnly(bind);
  }

  private static boolean loopbackOnly(String host) {
    try {
      for (InetAddress a : InetAddress.getAllByName(host.strip())) {
        if (!a.isLoopbackAddress()) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(
          "WORKFLOWS_BIND: \"" + host + "\" is neither an address nor a known host name", e);
    }
  }

  private static boolean bool(Map<String, String> env, String name) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return false;
    }
    return switch (v.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(name + " must be true or false, got \"" + v + "\"");
    };
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
