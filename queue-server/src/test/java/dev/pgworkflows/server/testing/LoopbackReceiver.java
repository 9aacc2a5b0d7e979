package dev.pgworkflows.server.testing;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A webhook receiver on 127.0.0.1 that records every request it gets and answers each with one
 * status (and a {@code Location}, for redirects).
 */
public final class LoopbackReceiver implements AutoCloseable {
  /** One request as it arrived. */
  public record Request(String path, Headers headers, byte[] body) {}

  private final HttpServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();

  private LoopbackReceiver(int status, String location) {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.createContext(
        "/",
        ex -> {
          requests.add(
              new Request(
                  ex.getRequestURI().toString(),
                  ex.getRequestHeaders(),
                  ex.getRequestBody().readAllBytes()));
          if (location != null) {
            ex.getResponseHeaders().add("Location", location);
          }
          ex.sendResponseHeaders(status, -1);
          ex.close();
        });
    server.start();
  }

  /** A receiver answering 204 to everything. */
  public static LoopbackReceiver accepting() {
    return new LoopbackReceiver(204, null);
  }

  /** A receiver answering every request with {@code status} and {@code Location: location}. */
  public static LoopbackReceiver redirecting(int status, String location) {
    return new LoopbackReceiver(status, location);
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
