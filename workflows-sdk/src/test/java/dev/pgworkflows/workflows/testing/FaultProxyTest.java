package dev.pgworkflows.workflows.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Each fault of {@link FaultProxy}, seen by a client of an echo server behind it. */
class FaultProxyTest {
  private ServerSocket echo;
  private FaultProxy proxy;

  @BeforeEach
  void startEchoServerBehindTheProxy() throws IOException {
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::serveEcho, "echo");
    t.setDaemon(true);
    t.start();
    proxy = FaultProxy.to("127.0.0.1", echo.getLocalPort());
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  private void serveEcho() {
    while (!echo.isClosed()) {
      try {
        Socket s = echo.accept();
        Thread t =
            new Thread(
                () -> {
                  try (s;
                      InputStream in = s.getInputStream();
                      OutputStream out = s.getOutputStream()) {
                    in.transferTo(out);
                  } catch (IOException e) {
                    // the client went away
                  }
                },
                "echo-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", proxy.port());
    s.setTcpNoDelay(true);
    s.setSoTimeout(5_000);
    return s;
  }

  /** Writes {@code text} and reads its echo; returns the milliseconds it took. */
  private static long roundTrip(Socket s, String text) throws IOException {
    long t0 = System.nanoTime();
    byte[] sent = text.getBytes(StandardCharsets.UTF_8);
    s.getOutputStream().write(sent);
    s.getOutputStream().flush();
    byte[] got = s.getInputStream().readNBytes(sent.length);
    assertThat(new String(got, StandardCharsets.UTF_8)).isEqualTo(text);
    return (System.nanoTime() - t0) / 1_000_000;
  }

  @Test
  void carriesBytesBothWaysWhenHealthy() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "hello")).isLessThan(1_000);
      assertThat(roundTrip(s, "x".repeat(100_000))).isLessThan(2_000);
    }
  }

  @Test
  void latencyDelaysEveryChunkUntilHealed() throws IOException {
    try (Socket s = connect()) {
      proxy.latency(Duration.ofMillis(300));
      // one chunk each way: at least twice the latency
      assertThat(roundTrip(s, "slow")).isGreaterThanOrEqualTo(600);
      proxy.heal();
      assertThat(roundTrip(s, "fast")).isLessThan(300);
    }
  }

  @Test
  void bandwidthLimitBoundsThroughputUntilHealed() throws IOException {
    try (Socket s = connect()) {
      proxy.bandwidth(20_000);
      // 10 kB at 20 kB/s takes half a second each way, the two directions overlapping
      assertThat(roundTrip(s, "b".repeat(10_000))).isGreaterThanOrEqualTo(450);
      proxy.heal();
      assertThat(roundTrip(s, "b".repeat(10_000))).isLessThan(400);
    }
  }

  @Test
  void resetAbortsOpenConnectionsWithRstAndNewOnesWork() throws Exception {
    try (Socket s = connect()) {
      roundTrip(s, "before");
      proxy.reset();
      // An RST, not a FIN: the read fails instead of reading end-of-stream.
      assertThatThrownBy(
              () -> {
                s.getOutputStream().write(1);
                s.getInputStream().read();
                s.getOutputStream().write(1);
                s.getInputStream().read();
              })
          .isInstanceOf(SocketException.class);
      awaitOpenConnections(0);
    }
    try (Socket again = connect()) {
      assertThat(roundTrip(again, "after")).isLessThan(1_000);
    }
  }

  @Test
  void blackholeHangsOpenAndNewConnectionsUntilHealedThenDeliversWhatWasHeld() throws Exception {
    try (Socket open = connect()) {
      roundTrip(open, "before");
      proxy.blackhole();
      try (Socket fresh = connect()) {
        for (Socket s : new Socket[] {open, fresh}) {
          s.setSoTimeout(700);
          s.getOutputStream().write("held".getBytes(StandardCharsets.UTF_8));
          assertThatThrownBy(() -> s.getInputStream().read())
              .isInstanceOf(SocketTimeoutException.class);
        }
        assertThat(proxy.openConnections()).isEqualTo(2);
        proxy.heal();
        for (Socket s : new Socket[] {open, fresh}) {
          s.setSoTimeout(5_000);
          assertThat(new String(s.getInputStream().readNBytes(4), StandardCharsets.UTF_8))
              .isEqualTo("held");
          assertThat(roundTrip(s, "after")).isLessThan(1_000);
        }
      }
    }
  }

  @Test
  void aResetFromUpstreamReachesTheClientAsAResetNotAnOrderlyClose() throws Exception {
    try (ServerSocket resetting = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        FaultProxy toResetting = FaultProxy.to("127.0.0.1", resetting.getLocalPort());
        Socket s = new Socket("127.0.0.1", toResetting.port())) {
      s.setSoTimeout(5_000);
      s.getOutputStream().write(1);
      try (Socket accepted = resetting.accept()) {
        assertThat(accepted.getInputStream().read()).isEqualTo(1);
        accepted.setSoLinger(true, 0);
      }
      // Closed with SO_LINGER 0, the upstream sent an RST; an orderly close would read -1 here.
      assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketException.class);
    }
  }

  @Test
  void slowCloseDelaysTheFinButNotTheBytesBeforeIt() throws IOException {
    try (Socket s = connect()) {
      proxy.slowClose(Duration.ofMillis(800));
      assertThat(roundTrip(s, "data")).isLessThan(500);
      long t0 = System.nanoTime();
      s.shutdownOutput();
      // The echo server sees the FIN late, closes, and its FIN is delayed again.
      assertThat(s.getInputStream().read()).isEqualTo(-1);
      assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThanOrEqualTo(1_500);
    }
    proxy.heal();
    try (Socket s = connect()) {
      roundTrip(s, "data");
      long t0 = System.nanoTime();
      s.shutdownOutput();
      assertThat(s.getInputStream().read()).isEqualTo(-1);
      assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(500);
    }
  }

  private void awaitOpenConnections(int n) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 5_000;
    while (proxy.openConnections() != n && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
    assertThat(proxy.openConnections()).isEqualTo(n);
  }
}
