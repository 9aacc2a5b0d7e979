package dev.pgworkflows.workflows.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a loopback port in front of {@code host:port} whose faults can be switched while
 * traffic flows: latency added to every chunk, a bandwidth limit, a reset of every open connection
 * (RST, not FIN), a blackhole, a delayed FIN, and {@link #heal}. One thread per direction of every
 * connection, plain blocking sockets: a test proxy carries tens of connections, not thousands.
 *
 * <p>A blackhole behaves as a network partition does: connections stay open and nothing passes
 * either way, so each peer waits on its reads (its writes fill the socket buffers, then wait too).
 * A connection made meanwhile is accepted but not carried on. What was written is held, not lost:
 * when the partition heals it passes, as TCP's retransmissions deliver it after a short partition.
 * A peer that gave up meanwhile (a timeout) has closed its end and simply finds it closed.
 */
public final class FaultProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final String upstreamHost;
  private final int upstreamPort;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private final AtomicInteger accepted = new AtomicInteger();
  private final Object gate = new Object();
  private boolean blackholed; // guarded by gate
  private volatile long latencyMs;
  private volatile long bytesPerSecond;
  private volatile long slowCloseMs;

  private FaultProxy(String upstreamHost, int upstreamPort) throws IOException {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
    this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "fault-proxy-accept");
    t.setDaemon(true);
    t.start();
  }

  /** A healthy proxy to {@code host:port}. */
  public static FaultProxy to(String host, int port) throws IOException {
    return new FaultProxy(host, port);
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** Connections open now (both directions carried or waiting on a blackhole). */
  public int openConnections() {
    return links.size();
  }

  /** Connections accepted since the proxy started. */
  public int acceptedConnections() {
    return accepted.get();
  }

  /** Every chunk read, either way, waits this long before it is written on. */
  public void latency(Duration perChunk) {
    latencyMs = perChunk.toMillis();
  }

  /** Each direction of each connection carries at most this many bytes a second. */
  public void bandwidth(long limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("bandwidth must be at least one byte a second");
    }
    bytesPerSecond = limit;
  }

  /** A peer's FIN reaches the other peer this much later (the bytes before it do not wait). */
  public void slowClose(Duration delay) {
    slowCloseMs = delay.toMillis();
  }

  /** Stops carrying anything, on open connections and on new ones, until {@link #heal}. */
  public void blackhole() {
    synchronized (gate) {
      blackholed = true;
    }
  }

  /**
   * Closes every connection open now with a TCP reset (SO_LINGER 0) on both sides, as a stateful
   * firewall or a restarted load balancer does; new connections are carried as before.
   */
  public void reset() {
    for (Link l : links) {
      l.reset();
    }
  }

  /** Ends every fault: no latency, no limit, no blackhole (held bytes pass), FINs on time. */
  public void heal() {
    latencyMs = 0;
    bytesPerSecond = 0;
    slowCloseMs = 0;
    synchronized (gate) {
      blackholed = false;
      gate.notifyAll();
    }
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        accepted.incrementAndGet();
        Link link = new Link(client);
        links.add(link);
        daemon("fault-proxy-connect", link::connect);
      } catch (IOException e) {
        return;
      }
    }
  }

  /** Returns once nothing is blackholed. */
  private void awaitPassage() throws InterruptedException {
    synchronized (gate) {
      while (blackholed) {
        gate.wait();
      }
    }
  }

  private static void daemon(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    listener.close();
    heal();
    for (Link l : links) {
      l.close();
    }
  }

  /** One client connection and its connection upstream. */
  private final class Link {
    private final Socket client;
    private volatile Socket upstream;
    private final AtomicInteger pumpsLeft = new AtomicInteger(2);

    Link(Socket client) {
      this.client = client;
    }

    void connect() {
      try {
        awaitPassage();
        if (client.isClosed()) {
          return; // reset while it waited
        }
        Socket s = new Socket(upstreamHost, upstreamPort);
        s.setTcpNoDelay(true);
        client.setTcpNoDelay(true);
        upstream = s;
        daemon("fault-proxy-up", () -> pump(client, s));
        daemon("fault-proxy-down", () -> pump(s, client));
      } catch (IOException e) {
        reset();
      } catch (InterruptedException e) {
        close();
      }
    }

    private void pump(Socket from, Socket to) {
      byte[] buf = new byte[8192];
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        while (true) {
          long limit = bytesPerSecond;
          // Under a limit, small reads keep the flow even instead of bursting 8 KiB at once.
          int max = limit > 0 ? (int) Math.max(1, Math.min(buf.length, limit / 20)) : buf.length;
          int n = in.read(buf, 0, max);
          if (n < 0) {
            long delay = slowCloseMs;
            if (delay > 0) {
              Thread.sleep(delay);
            }
            awaitPassage();
            to.shutdownOutput();
            break;
          }
          awaitPassage();
          long latency = latencyMs;
          if (latency > 0) {
            Thread.sleep(latency);
          }
          out.write(buf, 0, n);
          out.flush();
          limit = bytesPerSecond;
          if (limit > 0) {
            Thread.sleep(n * 1000L / limit);
          }
        }
      } catch (IOException e) {
        // A peer's reset (or a failed write) is passed on as a reset, not as an orderly close.
        reset();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
      }
      if (pumpsLeft.decrementAndGet() == 0) {
        close();
      }
    }

    void reset() {
      linger0(client);
      linger0(upstream);
      close();
    }

    private void linger0(Socket s) {
      if (s != null) {
        try {
          s.setSoLinger(true, 0);
        } catch (SocketException e) {
          // already closed
        }
      }
    }

    void close() {
      links.remove(this);
      closeQuietly(client);
      closeQuietly(upstream);
    }

    private void closeQuietly(Socket s) {
      if (s != null) {
        try {
          s.close();
        } catch (IOException e) {
          // already closed
        }
      }
    }
  }
}
