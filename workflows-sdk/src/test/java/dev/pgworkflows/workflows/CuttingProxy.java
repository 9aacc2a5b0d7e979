package dev.pgworkflows.workflows;

import dev.pgworkflows.workflows.testing.TcpProxy;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A proxy that passes bytes both ways and can cut every open connection at once. */
final class CuttingProxy extends TcpProxy {
  private final List<Socket> open = new CopyOnWriteArrayList<>();

  CuttingProxy(String upstream) throws IOException {
    super(upstream, "cutting-proxy");
  }

  @Override
  protected void connected(Socket client, Socket server) {
    open.add(client);
    open.add(server);
    daemon(() -> pipe(client, server));
    daemon(() -> pipe(server, client));
  }

  private static void pipe(Socket from, Socket to) {
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // cut
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  /** Closes every connection open now; new ones are accepted as before. */
  void cutAll() {
    for (Socket s : open) {
      closeQuietly(s);
    }
    open.clear();
  }
}
