package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A connection outlives the longest wait a poll may ask for. Were the server to close idle
 * connections at the longest wait, a poll answered as that timeout fired would see its connection
 * closed right after its answer, and the client's next request on it would fail.
 */
class IdleConnectionsOutliveTheLongestPollTest {
  @Test
  void aConnectionIdleForLongerThanTheLongestWaitIsStillServed() throws Exception {
    try (TestServer server = TestServer.start();
        Socket socket = new Socket("localhost", URI.create(server.url()).getPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      InputStream in = socket.getInputStream();
      String request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";

      out.write(request.getBytes(StandardCharsets.US_ASCII));
      assertThat(head(in)).startsWith("HTTP/1.1 200");

      Thread.sleep(31_000); // longer than the longest wait (30 s)
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      assertThat(head(in)).startsWith("HTTP/1.1 200");
    }
  }

  /** The status line and headers of one response, and its body read past; "" at end of stream. */
  private static String head(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) >= 0) {
      head.write(c);
      if (head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
        break;
      }
    }
    String text = head.toString(StandardCharsets.US_ASCII);
    for (String line : text.split("\r\n")) {
      if (line.toLowerCase().startsWith("content-length:")) {
        in.readNBytes(Integer.parseInt(line.substring("content-length:".length()).trim()));
      }
    }
    return text;
  }
}
