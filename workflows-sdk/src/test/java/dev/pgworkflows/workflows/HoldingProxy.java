package dev.pgworkflows.workflows;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of a server that, like a proxy buffering answers, holds back what comes back
 * on a connection once a task stream was asked for on it, until 64 KiB have gathered or either side
 * closes; everything else passes through as it comes.
 */
final class HoldingProxy implements AutoCloseable {
  private static final int HOLD_BYTES = 64 * 1024;

  private final ServerSocket listener;
  private final String upstreamHost;
  private final int upstreamPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger held = new AtomicInteger();

  HoldingProxy(String upstream) throws IOException {
    URI u = URI.create(upstream);
    this.upstreamHost = u.getHost();
    this.upstreamPort = u.getPort();
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "holding-proxy");
    accept.setDaemon(true);
    accept.start();
  }

  String url() {
    return "http://127.0.0.1:" + listener.getLocalPort();
  }

  /** Connections on which a task stream was asked for, so far. */
  int streamsHeld() {
    return held.get();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(upstreamHost, upstreamPort);
        sockets.add(client);
        sockets.add(server);
        boolean[] holding = {false};
        daemon(() -> requests(client, server, holding));
        daemon(() -> answers(server, client, holding));
      } catch (IOException e) {
        return;
      }
    }
  }

  /** Passes requests on as they come, noting a request for a task stream. */
  private void requests(Socket client, Socket server, boolean[] holding) {
    try (InputStream in = client.getInputStream();
        OutputStream out = server.getOutputStream()) {
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) > 0; ) {
        if (new String(buf, 0, n, StandardCharsets.ISO_8859_1).contains("/tasks/stream ")) {
          synchronized (holding) {
            if (!holding[0]) {
              held.incrementAndGet();
            }
            holding[0] = true;
          }
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // the other side went away
    } finally {
      closeQuietly(client);
      closeQuietly(server);
    }
  }

  /** Passes answers on as they come, or holds them once the connection asked for a stream. */
  private void answers(Socket server, Socket client, boolean[] holding) {
    ByteArrayOutputStream gathered = new ByteArrayOutputStream();
    try (InputStream in = server.getInputStream();
        OutputStream out = client.getOutputStream()) {
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) > 0; ) {
        boolean hold;
        synchronized (holding) {
          hold = holding[0];
        }
        if (!hold) {
          out.write(buf, 0, n);
          out.flush();
          continue;
        }
        gathered.write(buf, 0, n);
        if (gathered.size() >= HOLD_BYTES) {
          gathered.writeTo(out);
          out.flush();
          gathered.reset();
        }
      }
      gathered.writeTo(out); // the answer ended: what was held goes out now
      out.flush();
    } catch (IOException e) {
      // the other side went away
    } finally {
      closeQuietly(client);
      closeQuietly(server);
    }
  }

  private static void daemon(Runnable r) {
    Thread t = new Thread(r, "holding-proxy-pipe");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
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
