package dev.pgworkflows.server.internal.http;

import java.time.Duration;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * How long the server keeps a connection that carries no bytes. Jetty counts a long poll's wait as
 * idle time. When its idle timeout (30 s by default) runs out while a poll of the same length is
 * being answered, the answer still goes out but the connection is closed right after it, and the
 * client's next request on that connection finds a closed socket: a failed request for a client
 * that does not retry it. So a connection is kept for the longest wait plus a margin.
 */
public final class IdleConnections {
  /** Time a connection is kept idle beyond the longest wait a request may ask for. */
  static final Duration MARGIN = Duration.ofSeconds(30);

  private IdleConnections() {}

  /** Sets the idle timeout of every connector of {@code server} as it starts. */
  public static void outlast(Server server, Duration longestWait) {
    long millis = longestWait.plus(MARGIN).toMillis();
    server.addEventListener(
        new LifeCycle.Listener() {
          @Override
          public void lifeCycleStarting(LifeCycle event) {
            for (Connector connector : server.getConnectors()) {
              if (connector instanceof AbstractConnector c) {
                c.setIdleTimeout(millis);
              }
            }
          }
        });
  }
}
