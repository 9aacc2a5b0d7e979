package dev.pgworkflows.workflows;

import dev.pgworkflows.workflows.testing.TcpProxy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of a server that, like a proxy buffering answers, holds back what comes back
 * on a connection once a task stream was asked for on it, until 64 KiB have gathered or either side
 * closes; everything else passes through as it comes.
 */
final class HoldingProxy extends TcpProxy {
  private static final int HOLD_BYTES = 64 * 1024;

  private final AtomicInteger held = new AtomicInteger();

  HoldingProxy(String upstream) throws IOException {
    super(upstream, "holding-proxy");
  }

  /** Connections on which a task stream was asked for, so far. */
  int streamsHeld() {
    return held.get();
  }

  @Override
  protected void connected(Socket client, Socket server) {
    boolean[] holding = {false};
    daemon(() -> requests(client, server, holding));
    daemon(() -> answers(server, client, holding));
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
}
