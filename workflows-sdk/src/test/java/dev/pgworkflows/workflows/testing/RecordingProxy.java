package dev.pgworkflows.workflows.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * An HTTP/1.1 proxy in front of a server that records every request passing through it (method,
 * path, headers, body) and passes requests and answers on unchanged, answers as they come (so task
 * streams stream). Reads the requests the SDK makes: bodies with a Content-Length or none. A proxy
 * made with a hold time holds each request it matches that long before passing it on, as a slow
 * network would.
 */
public final class RecordingProxy extends TcpProxy {
  /** One request as it went to the server. */
  public record Recorded(String method, String target, Map<String, String> headers, String body) {
    public String path() {
      int q = target.indexOf('?');
      return q < 0 ? target : target.substring(0, q);
    }

    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private final List<Recorded> recorded = new CopyOnWriteArrayList<>();
  private final Predicate<Recorded> slow;
  private final long holdMs;

  public RecordingProxy(String upstream) throws IOException {
    this(upstream, r -> false, 0);
  }

  /** Holds each request {@code slow} matches for {@code holdMs} before passing it on. */
  public RecordingProxy(String upstream, Predicate<Recorded> slow, long holdMs) throws IOException {
    super(upstream, "recording-proxy");
    this.slow = slow;
    this.holdMs = holdMs;
  }

  /** The requests so far, in the order they were read. */
  public List<Recorded> requests() {
    return new ArrayList<>(recorded);
  }

  @Override
  protected void connected(Socket client, Socket server) {
    daemon(() -> requests(client, server));
    daemon(() -> answers(server, client));
  }

  /** Reads request after request off the connection, records each and passes it on. */
  private void requests(Socket client, Socket server) {
    try (InputStream in = client.getInputStream();
        OutputStream out = server.getOutputStream()) {
      while (true) {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        if (!readHead(in, head)) {
          return;
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        String[] lines = text.split("\r\n");
        String[] requestLine = lines[0].split(" ");
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
          int colon = lines[i].indexOf(':');
          if (colon > 0) {
            headers.put(
                lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                lines[i].substring(colon + 1).trim());
          }
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        Recorded r =
            new Recorded(
                requestLine[0], requestLine[1], headers, new String(body, StandardCharsets.UTF_8));
        recorded.add(r);
        if (slow.test(r)) {
          try {
            Thread.sleep(holdMs);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        head.writeTo(out);
        out.write(body);
        out.flush();
      }
    } catch (IOException e) {
      // the other side went away
    } finally {
      closeQuietly(client);
      closeQuietly(server);
    }
  }

  /** Reads up to and including the blank line; false when the connection ended first. */
  private static boolean readHead(InputStream in, ByteArrayOutputStream head) throws IOException {
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    for (int b; (b = in.read()) >= 0; ) {
      head.write(b);
      matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      if (matched == 4) {
        return true;
      }
    }
    return false;
  }

  private void answers(Socket server, Socket client) {
    try (InputStream in = server.getInputStream();
        OutputStream out = client.getOutputStream()) {
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) > 0; ) {
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
}
