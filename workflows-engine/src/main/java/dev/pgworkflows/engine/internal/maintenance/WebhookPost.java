package dev.pgworkflows.engine.internal.maintenance;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * One webhook POST over HTTP/1.1 (TLS for https), to addresses already vetted by {@link
 * WebhookTargets}: the JDK's HTTP clients look the host up again themselves, and a second answer
 * could point elsewhere. The URL's host still goes in the {@code Host} header, in SNI and in the
 * certificate check. Only the status line is read; a redirect is an answer like any other, never
 * followed. The whole exchange, connect included, is bounded by the timeout.
 */
final class WebhookPost {
  private static final int MAX_LINE = 8192;

  private WebhookPost() {}

  /**
   * Posts {@code body} to {@code url} at the first of {@code addresses} that accepts a connection
   * and returns the response's status code; {@code tls} makes the TLS connections of https URLs
   * (the JDK's default trusts the JDK's certificate authorities).
   */
  static int post(
      URI url,
      List<InetAddress> addresses,
      Map<String, String> headers,
      byte[] body,
      Duration timeout,
      ScheduledExecutorService watchdog,
      SSLSocketFactory tls)
      throws IOException {
    boolean https = "https".equalsIgnoreCase(url.getScheme());
    int port = url.getPort() != -1 ? url.getPort() : https ? 443 : 80;
    long deadline = System.nanoTime() + timeout.toNanos();
    Socket socket = connect(addresses, port, deadline);
    AtomicBoolean late = new AtomicBoolean();
    // Socket writes have no timeout of their own: a receiver that stops reading is cut off here.
    ScheduledFuture<?> cutOff =
        watchdog.schedule(
            () -> {
              late.set(true);
              closeQuietly(socket);
            },
            Math.max(1, deadline - System.nanoTime()),
            TimeUnit.NANOSECONDS);
    try (socket) {
      Socket s = https ? tls(tls, socket, url.getHost(), port) : socket;
      s.setSoTimeout(Math.max(1, (int) timeout.toMillis()));
      OutputStream out = s.getOutputStream();
      out.write(head(url, port, https, headers, body.length));
      out.write(body);
      out.flush();
      return status(new BufferedInputStream(s.getInputStream()));
    } catch (IOException e) {
      if (late.get()) {
        throw new IOException("no answer within " + timeout.toMillis() + " ms", e);
      }
      throw e;
    } finally {
      cutOff.cancel(false);
    }
  }

  private static Socket connect(List<InetAddress> addresses, int port, long deadline)
      throws IOException {
    IOException last = null;
    for (InetAddress a : addresses) {
      int left = (int) TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        break;
      }
      Socket socket = new Socket();
      try {
        socket.connect(new InetSocketAddress(a, port), left);
        return socket;
      } catch (IOException e) {
        closeQuietly(socket);
        last = new IOException("could not connect to " + a.getHostAddress() + ": " + e, e);
      }
    }
    throw last != null ? last : new IOException("no time left to connect");
  }

  private static Socket tls(SSLSocketFactory factory, Socket plain, String host, int port)
      throws IOException {
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    SSLSocket tls = (SSLSocket) factory.createSocket(plain, bare, port, true);
    SSLParameters params = tls.getSSLParameters();
    // The certificate must name the URL's host, not the address we connected to.
    params.setEndpointIdentificationAlgorithm("HTTPS");
    if (!WebhookTargets.isLiteral(bare)) {
      try {
        params.setServerNames(List.of(new SNIHostName(bare)));
      } catch (IllegalArgumentException e) {
        // Not a name SNI can carry (an underscore, say): the handshake goes without it.
      }
    }
    tls.setSSLParameters(params);
    tls.startHandshake();
    return tls;
  }

  private static byte[] head(
      URI url, int port, boolean https, Map<String, String> headers, int length) {
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    if (url.getRawQuery() != null) {
      path += "?" + url.getRawQuery();
    }
    boolean defaultPort = port == (https ? 443 : 80);
    StringBuilder h = new StringBuilder();
    h.append("POST ").append(path).append(" HTTP/1.1\r\n");
    h.append("Host: ").append(url.getHost()).append(defaultPort ? "" : ":" + port).append("\r\n");
    h.append("User-Agent: pgworkflows-webhook\r\n");
    h.append("Content-Length: ").append(length).append("\r\n");
    h.append("Connection: close\r\n");
    headers.forEach(
        (name, value) -> {
          if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("header " + name + " holds a line break");
          }
          h.append(name).append(": ").append(value).append("\r\n");
        });
    h.append("\r\n");
    return h.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** The final status code: informational (1xx) answers are skipped. */
  private static int status(InputStream in) throws IOException {
    while (true) {
      String line = line(in);
      String[] parts = line.split(" ", 3);
      if (parts.length < 2 || !parts[0].startsWith("HTTP/1.") || !parts[1].matches("\\d{3}")) {
        throw new IOException("not an HTTP/1.x response: " + abbreviate(line));
      }
      int code = Integer.parseInt(parts[1]);
      if (code >= 200) {
        return code;
      }
      while (!line(in).isEmpty()) {
        // the informational answer's headers
      }
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("the connection closed before a complete response");
      }
      if (buf.size() >= MAX_LINE) {
        throw new IOException("a response line longer than " + MAX_LINE + " bytes");
      }
      buf.write(c);
    }
    String s = buf.toString(StandardCharsets.ISO_8859_1);
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }

  private static String abbreviate(String s) {
    return s.length() > 80 ? s.substring(0, 80) + "..." : s;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing is all that was wanted
    }
  }
}
