package dev.pgworkflows.workflows.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a loopback port in front of a server: each connection accepted gets one to the
 * server, and the subclass pipes the two ({@link #connected}) on threads of its own ({@link
 * #daemon}).
 */
public abstract class TcpProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final String upstreamHost;
  private final int upstreamPort;
  private final String threadName;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  protected TcpProxy(String upstream, String threadName) throws IOException {
    URI u = URI.create(upstream);
    this.upstreamHost = u.getHost();
    this.upstreamPort = u.getPort();
    this.threadName = threadName;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, threadName);
    accept.setDaemon(true);
    accept.start();
  }

  public String url() {
    return "http://127.0.0.1:" + listener.getLocalPort();
  }

  /** A client connected and its connection to the server is open: pipe them. */
  protected abstract void connected(Socket client, Socket server);

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(upstreamHost, upstreamPort);
        sockets.add(client);
        sockets.add(server);
        connected(client, server);
      } catch (IOException e) {
        return;
      }
    }
  }

  /** Runs {@code r} on a daemon thread of this proxy's. */
  protected void daemon(Runnable r) {
    Thread t = new Thread(r, threadName + "-pipe");
    t.setDaemon(true);
    t.start();
  }

  protected static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }
}
