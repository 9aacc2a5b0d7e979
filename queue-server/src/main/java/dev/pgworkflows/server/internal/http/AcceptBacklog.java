package dev.pgworkflows.server.internal.http;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * How many connections the kernel holds for the server before it accepts them. Jetty asks for 50
 * unless told. A fleet of workers reconnecting at once (a server restarted, a load balancer failing
 * over) opens hundreds of connections in the same instant; past the backlog the kernel drops them
 * or answers with SYN cookies, and some of those connections were closed before their first request
 * was read: 1 of 2,000 task streams opened at once never got its answer, and a client that opened
 * 2,000 at once saw a few refused with no response at all. The kernel caps the backlog at {@code
 * net.core.somaxconn} (4,096 on current Linux).
 */
public final class AcceptBacklog {
  /** Connections waiting to be accepted, at most. */
  static final int SIZE = 2048;

  private AcceptBacklog() {}

  /** Sets the accept backlog of every connector of {@code server} as it starts. */
  public static void raise(Server server) {
    server.addEventListener(
        new LifeCycle.Listener() {
          @Override
          public void lifeCycleStarting(LifeCycle event) {
            for (Connector connector : server.getConnectors()) {
              if (connector instanceof ServerConnector c) {
                c.setAcceptQueueSize(SIZE);
              }
            }
          }
        });
  }
}
