package dev.pgworkflows.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code java -jar queue-server.jar}: configuration from the environment, see README. */
public final class Main {
  private static final Logger log = LoggerFactory.getLogger(Main.class);

  private Main() {}

  public static void main(String[] args) {
    try {
      QueueServer server = QueueServer.start(ServerConfig.fromEnvironment());
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "shutdown"));
    } catch (RuntimeException e) {
      log.error("server failed to start: {}", e.getMessage(), e);
      System.exit(1);
    }
  }
}
