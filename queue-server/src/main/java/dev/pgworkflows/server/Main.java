package dev.pgworkflows.server;

import dev.pgworkflows.server.internal.telemetry.Tracing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar queue-server.jar}: configuration from the environment, see
 * docs/configuration.md.
 */
public final class Main {
  private static final Logger log = LoggerFactory.getLogger(Main.class);

  private Main() {}

  public static void main(String[] args) {
    ServerConfig config;
    try {
      config = ServerConfig.fromEnvironment();
    } catch (IllegalArgumentException e) {
      // A setting the operator must fix: one line naming the variable, no stack trace.
      log.error("server refused to start: {}", e.getMessage());
      System.exit(2);
      return;
    }
    try {
      // Only the command-line server traces as its process's OTEL_* settings say.
      QueueServer server =
          QueueServer.builder(config).environment(Tracing.processSettings()).start();
      // SIGTERM and SIGINT: the server stops in order (see QueueServer#close), an embedded
      // PostgreSQL last.
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "shutdown"));
    } catch (RuntimeException e) {
      log.error("server failed to start: {}", e.getMessage(), e);
      System.exit(1);
    }
  }
}
