package dev.pgworkflows.server.internal.http;

import java.time.Duration;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * What the server's connectors keep, set on each as the server starts.
 *
 * <p>How long a connection that carries no bytes is kept. Jetty counts a long poll's wait as idle
 * time. When its idle timeout (30 s by default) runs out while a poll of the same length is being
 * answered, the answer still goes out but the connection is closed right after it, and the client's
 * next request on that connection finds a closed socket: a failed request for a client that does
 * not retry it. So a connection is kept for the longest wait plus a margin.
 *
 * <p>How many connections the kernel holds before the server accepts them. Jetty asks for 50. A
 * fleet of workers reconnecting at once (a server restarted, a load balancer failing over) opens
 * hundreds of connections in the same instant; past the backlog the kernel drops them or answers
 * with SYN cookies, and some of those connections were closed before their first request was read:
 * 1 of 2,000 task streams opened at once never got its answer. The kernel caps the backlog at
 * {@code net.core.somaxconn} (4,096 on current Linux).
 */
public final class ConnectorSettings {
  /** Time a connection is kept idle beyond the longest wait a request may ask for. */
  static final Duration MARGIN = Duration.ofSeconds(30);

  /** Connections waiting to be accepted, at most. */
  static final int ACCEPT_BACKLOG = 2048;

  private ConnectorSettings() {}

  /** Sets the idle timeout and the accept backlog of every connector of {@code server}. */
  public static void apply(Server server, Duration longestWait) {
    long idleMillis = longestWait.plus(MARGIN).toMillis();
    server.addEventListener(
        new LifeCycle.Listener() {
          @Override
          public void lifeCycleStarting(LifeCycle event) {
            for (Connector connector : server.getConnectors()) {
              if (connector instanceof AbstractConnector c) {
                c.setIdleTimeout(idleMillis);
              }
              if (connector instanceof ServerConnector c) {
                c.setAcceptQueueSize(ACCEPT_BACKLOG);
              }
            }
          }
        });
  }
}
