package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.server.internal.telemetry.Metrics;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.Javalin;
import io.javalin.config.RoutesConfig;
import java.util.List;
import java.util.function.Consumer;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The HTTP server: Jetty and Javalin tuned for many long polls and small answers, problem+json for
 * every error, the hooks around every request (id, span, metrics, authentication), and the routes.
 */
public final class WebServer {
  /** Header-field cache per connection, in trie nodes (see where it is set). */
  private static final int HEADER_CACHE = 256;

  /** Javalin's buffer for copying a result into the response, in bytes (see where it is set). */
  private static final int RESPONSE_COPY_BUFFER = 4096;

  /** How long an async answer (a long poll) may take before Jetty gives up on it, in ms. */
  private static final long ASYNC_TIMEOUT_MS = 45_000;

  /**
   * How long stopping waits for requests in flight, in ms. Polls and task streams were answered
   * before (see QueueServer#close); what is left are short requests, or bodies still arriving.
   */
  private static final long STOP_TIMEOUT_MS = 5_000;

  /**
   * While the server stops, a connection that carries no bytes for this long is closed, in ms: an
   * idle keep-alive connection goes at once rather than after Jetty's default of a second (each
   * stop would wait it out), and so does a request whose body stalls this long.
   */
  private static final long SHUTDOWN_IDLE_MS = 250;

  /**
   * The request threads at most. Long polls and task streams hold none while they wait (their
   * answers and lines are written from other threads), so this bounds short requests in flight.
   */
  static final int MAX_THREADS = 200;

  private WebServer() {}

  /**
   * Starts serving on {@code host} (an address or name; see ServerConfig#bind) and {@code port}.
   * {@code routes} register in the order given: Javalin tries a request's path against the routes
   * of its method in the order they were added, so the busiest go first.
   */
  public static Javalin start(
      String host,
      int port,
      long maxBodyBytes,
      Auth auth,
      OperatorAudit audit,
      Metrics metrics,
      Tracing tracing,
      List<Consumer<RoutesConfig>> routes) {
    Javalin[] app = new Javalin[1];
    app[0] =
        Javalin.create(
            cfg -> {
              cfg.startup.showJavalinBanner = false;
              cfg.http.maxRequestSize = maxBodyBytes;
              cfg.http.asyncTimeout = ASYNC_TIMEOUT_MS;
              // Javalin copies every result into the response through a buffer of this size, new
              // for each response: Jetty's output buffer size (32 KiB) unless set. The answers of
              // the worker protocol are a few hundred bytes, and at a moderate load that buffer
              // was a quarter of all the bytes a server, two workers and a load generator in one
              // JVM allocated. Bodies over it are copied in more pieces, and it stays over the
              // size from which Javalin compresses (1,500 bytes), so what is compressed does not
              // change.
              cfg.http.responseBufferSize = RESPONSE_COPY_BUFFER;
              QueuedThreadPool threads = new QueuedThreadPool(MAX_THREADS, 8, 60_000);
              threads.setName("JettyServerThreadPool");
              cfg.jetty.threadPool = threads;
              cfg.jetty.host = host;
              cfg.jetty.port = port;
              cfg.jetty.modifyServer(
                  server -> {
                    server.setErrorHandler(new JettyProblems());
                    // Stopping is graceful: the server takes no new connections (and answers a
                    // new request on an open one with 503), and waits for the requests in flight.
                    GracefulHandler graceful = new GracefulHandler();
                    graceful.setShutdownIdleTimeout(SHUTDOWN_IDLE_MS);
                    server.insertHandler(graceful);
                    server.setStopTimeout(STOP_TIMEOUT_MS);
                    ConnectorSettings.apply(server, LongPoll.MAX_WAIT);
                  });
              // Jetty keeps a cache of header fields per connection, sized in trie nodes of 96
              // bytes: 1,024 by default, 96 KiB for every open connection once it has served a
              // request, and a long-poll client holds its connection open. 1,000 waiting polls
              // held 96 MiB of it; a worker's repeated headers fit in a quarter of that.
              cfg.jetty.modifyHttpConfiguration(http -> http.setHeaderCacheSize(HEADER_CACHE));
              Problems.install(cfg);
              RouteTemplates templates = new RouteTemplates(() -> app[0]);
              RequestHooks hooks = new RequestHooks().before(RequestIds::assign);
              // Metrics first, before the hooks that may refuse a request: refused requests are
              // timed too.
              hooks
                  .before(metrics::requestStarted)
                  .after(ctx -> metrics.requestEnded(ctx, templates.of(ctx)));
              hooks
                  .before(tracing::requestStarted)
                  .after(ctx -> tracing.requestEnded(ctx, templates.of(ctx)));
              hooks
                  .before(ctx -> auth.check(ctx, templates.of(ctx)))
                  .after(ctx -> audit.after(ctx, templates.of(ctx)))
                  .after(ctx -> RequestIds.clear());
              hooks.install(cfg.routes);
              routes.forEach(r -> r.accept(cfg.routes));
            });
    app[0].start();
    return app[0];
  }
}
