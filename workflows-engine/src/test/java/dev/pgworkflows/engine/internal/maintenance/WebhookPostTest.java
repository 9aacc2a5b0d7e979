package dev.pgworkflows.engine.internal.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The webhook POST connects to the vetted address and speaks to the URL's host. */
class WebhookPostTest {
  private static final List<InetAddress> LOOPBACK = List.of(InetAddress.getLoopbackAddress());
  private static final ScheduledExecutorService watchdog =
      Executors.newSingleThreadScheduledExecutor();

  @AfterAll
  static void stop() {
    watchdog.shutdownNow();
  }

  @Test
  void httpsChecksTheCertificateAgainstTheUrlsHostNotTheAddressConnectedTo(@TempDir Path dir)
      throws Exception {
    SSLContext ctx = selfSigned(dir, "hooks.example.test");
    HttpsServer server = HttpsServer.create(new InetSocketAddress(LOOPBACK.get(0), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(ctx));
    List<String> seen = new CopyOnWriteArrayList<>();
    server.createContext(
        "/",
        ex -> {
          var names = ((ExtendedSSLSession) ((HttpsExchange) ex).getSSLSession());
          seen.add(
              ex.getRequestHeaders().getFirst("Host")
                  + " sni="
                  + ((SNIHostName) names.getRequestedServerNames().get(0)).getAsciiName());
          ex.getRequestBody().readAllBytes();
          ex.sendResponseHeaders(204, -1);
          ex.close();
        });
    server.start();
    try {
      int port = server.getAddress().getPort();
      SSLSocketFactory trusting = ctx.getSocketFactory();

      int status = post("https://hooks.example.test:" + port + "/hook", trusting);

      assertThat(status).isEqualTo(204);
      assertThat(seen).containsExactly("hooks.example.test:" + port + " sni=hooks.example.test");
      // The same address and certificate, another name in the URL: the certificate does not fit.
      assertThatThrownBy(() -> post("https://other.example.test:" + port + "/hook", trusting))
          .isInstanceOf(SSLHandshakeException.class);
      assertThat(seen).hasSize(1);
    } finally {
      server.stop(0);
    }
  }

  @Test
  void aReceiverThatNeverAnswersIsCutOffAtTheTimeout() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 10, LOOPBACK.get(0))) {
      long start = System.nanoTime();
      assertThatThrownBy(
              () ->
                  WebhookPost.post(
                      URI.create("http://silent.test:" + silent.getLocalPort() + "/"),
                      LOOPBACK,
                      Map.of(),
                      new byte[0],
                      Duration.ofMillis(300),
                      watchdog,
                      (SSLSocketFactory) SSLSocketFactory.getDefault()))
          .isInstanceOf(IOException.class);
      assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(5));
    }
  }

  @Test
  void theRequestCarriesTheUrlsHostPathAndHeadersAndReadsOnlyTheStatus() throws Exception {
    try (ServerSocket receiver = new ServerSocket(0, 10, LOOPBACK.get(0))) {
      List<String> head = new CopyOnWriteArrayList<>();
      Thread t =
          new Thread(
              () -> {
                try (Socket s = receiver.accept()) {
                  InputStream in = s.getInputStream();
                  StringBuilder b = new StringBuilder();
                  while (!b.toString().endsWith("\r\n\r\n")) {
                    b.append((char) in.read());
                  }
                  head.add(b.toString());
                  s.getOutputStream()
                      .write(
                          ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\nLocation:"
                                  + " http://169.254.169.254/\r\n\r\n")
                              .getBytes(StandardCharsets.US_ASCII));
                  s.getOutputStream().flush();
                  Thread.sleep(200);
                } catch (IOException | InterruptedException e) {
                  head.add("failed: " + e);
                }
              });
      t.start();
      int status =
          WebhookPost.post(
              URI.create("http://name.test:" + receiver.getLocalPort() + "/a/b%20c?x=1#frag"),
              LOOPBACK,
              Map.of("Webhook-Id", "7"),
              "{}".getBytes(StandardCharsets.UTF_8),
              Duration.ofSeconds(5),
              watchdog,
              (SSLSocketFactory) SSLSocketFactory.getDefault());
      t.join();
      assertThat(status).isEqualTo(302);
      assertThat(head.get(0))
          .startsWith("POST /a/b%20c?x=1 HTTP/1.1\r\nHost: name.test:" + receiver.getLocalPort())
          .contains("\r\nContent-Length: 2\r\n")
          .contains("\r\nWebhook-Id: 7\r\n");
    }
  }

  private static int post(String url, SSLSocketFactory tls) throws IOException {
    return WebhookPost.post(
        URI.create(url),
        LOOPBACK,
        Map.of(),
        "{}".getBytes(StandardCharsets.UTF_8),
        Duration.ofSeconds(10),
        watchdog,
        tls);
  }

  /** A context holding a new self-signed certificate for {@code name}, and trusting only it. */
  private static SSLContext selfSigned(Path dir, String name) throws Exception {
    Path store = dir.resolve("hooks.p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "hooks",
                "-keyalg",
                "EC",
                "-dname",
                "CN=" + name,
                "-ext",
                "SAN=dns:" + name,
                "-validity",
                "2",
                "-keystore",
                store.toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("keytool.log").toFile())
            .start();
    assertThat(keytool.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).as(Files.readString(dir.resolve("keytool.log"))).isZero();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }
}
