package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.server.ApiToken;
import dev.pgworkflows.server.Scope;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says at start who may reach the server and what they may do: the tokens by name and scope, or
 * presence-only mode on loopback, or (loudly, at start and every hour) no authentication at all
 * beyond loopback.
 */
public final class Exposure {
  private static final Logger log = LoggerFactory.getLogger(Exposure.class);

  /** How often an unauthenticated server beyond loopback repeats its warning. */
  static final long INSECURE_WARNING_EVERY_MS = TimeUnit.HOURS.toMillis(1);

  private Exposure() {}

  /** Logs the server's exposure; repeats the warning of an unauthenticated one on {@code timer}. */
  public static void announce(
      String bind,
      boolean loopbackOnly,
      List<ApiToken> tokens,
      boolean insecureNoAuth,
      ScheduledExecutorService timer) {
    if (!tokens.isEmpty()) {
      log.info(
          "listening on {}; {} API token(s): {}",
          bind,
          tokens.size(),
          tokens.stream()
              .map(t -> t.name() + " " + t.scopes().stream().map(Scope::wire).toList())
              .collect(Collectors.joining(", ")));
      if (insecureNoAuth) {
        log.info("WORKFLOWS_INSECURE_NO_AUTH is ignored: tokens are configured");
      }
    } else if (loopbackOnly) {
      log.warn(
          "WORKFLOWS_API_TOKENS is not set: listening on loopback ({}) only, where any bearer token"
              + " is accepted with every scope (presence-only mode); set tokens to listen beyond"
              + " loopback (WORKFLOWS_BIND)",
          bind);
    } else {
      Runnable warn =
          () ->
              log.warn(
                  "WORKFLOWS_INSECURE_NO_AUTH=true: listening on {} without authentication; anyone"
                      + " who reaches this port may use every route, cancel and purge included."
                      + " Set WORKFLOWS_API_TOKENS",
                  bind);
      warn.run();
      timer.scheduleAtFixedRate(
          warn, INSECURE_WARNING_EVERY_MS, INSECURE_WARNING_EVERY_MS, TimeUnit.MILLISECONDS);
    }
  }
}
