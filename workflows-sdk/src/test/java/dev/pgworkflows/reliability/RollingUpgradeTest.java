package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * For each earlier release: three of its servers on one database, each with a worker JVM, under 45
 * starts a second spread over them, are replaced one at a time by this build's server (SIGTERM, the
 * new one started on the same port, 5 s of service, the next). Both versions serve side by side
 * during the roll. No start is refused but with an answer the client may retry (the server being
 * away, or 503), and every acknowledged start completes once with its answer and its three steps.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@Tag("reliability")
class RollingUpgradeTest {
  private static final int SERVERS = 3;

  /** A start every 66 ms from each server's producer: about 45 a second in all. */
  private static final long START_EVERY_MS = 66;

  static List<Releases.Release> releases() throws Exception {
    return Releases.all();
  }

  @ParameterizedTest(name = "from {0}")
  @MethodSource("releases")
  void serversReplacedOneAtATimeUnderLoadRefuseOnlyRetryablyAndLoseNothing(
      Releases.Release release, @TempDir Path dir) throws Exception {
    Path jar = Releases.serverJar(release);
    TestDatabase db = TestDatabase.blank();
    List<Map<String, String>> envs = new ArrayList<>();
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < SERVERS; i++) {
      int port = ServerJvms.freePort();
      envs.add(ServerJvms.env(db, port));
      urls.add("http://localhost:" + port);
    }
    Process[] servers = new Process[SERVERS];
    List<Process> workers = new ArrayList<>();
    Map<Long, Integer> acked = new ConcurrentHashMap<>();
    Map<String, Integer> refusals = new ConcurrentHashMap<>();
    List<SteadyStarts> producers = new ArrayList<>();
    try {
      // One at a time: the first migrates the blank database to the release's schema.
      for (int i = 0; i < SERVERS; i++) {
        servers[i] = ServerJvms.release(jar, out(dir, "release", i), envs.get(i));
        ChildJvm.awaitReady(urls.get(i), out(dir, "release", i));
      }
      for (int i = 0; i < SERVERS; i++) {
        workers.add(
            ChildJvm.start(
                ScaleOutWorkflow.class,
                dir.resolve("worker-" + i + ".out"),
                Map.of(),
                "http",
                urls.get(i)));
      }
      AtomicInteger inputs = new AtomicInteger();
      for (int i = 0; i < SERVERS; i++) {
        producers.add(
            new SteadyStarts(
                "producer-" + i,
                WorkflowClient.connect(urls.get(i)),
                START_EVERY_MS,
                inputs,
                acked,
                refusals));
      }
      Thread.sleep(8_000);
      int[] ackedBeforeRoll = new int[SERVERS];
      for (int i = 0; i < SERVERS; i++) {
        ackedBeforeRoll[i] = producers.get(i).acked();
        ServerJvms.stop(servers[i]);
        servers[i] = ServerJvms.current(out(dir, "current", i), envs.get(i));
        ChildJvm.awaitReady(urls.get(i), out(dir, "current", i));
        Thread.sleep(5_000);
      }
      Thread.sleep(5_000);
      for (SteadyStarts p : producers) {
        p.close();
      }
      for (int i = 0; i < SERVERS; i++) {
        assertThat(producers.get(i).acked())
            .as("starts acknowledged by server %d after it was replaced", i)
            .isGreaterThan(ackedBeforeRoll[i]);
      }
      long t0 = System.nanoTime();
      PressureCell.awaitAll(db, acked.keySet());
      PressureCell.assertEachRanOnce(db, acked);
      System.out.printf(
          "rolling upgrade from %s: %d acknowledged starts (%s by server), all completed once,"
              + " the last %d ms after the load stopped; refused %s%n",
          release,
          acked.size(),
          producers,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0),
          refusals);
      assertThat(SteadyStarts.onlyRetryable(refusals)).as("refused: %s", refusals).isTrue();
    } finally {
      for (SteadyStarts p : producers) {
        p.close();
      }
      for (Process p : workers) {
        ChildJvm.kill(p);
      }
      for (Process p : servers) {
        if (p != null) {
          ChildJvm.kill(p);
        }
      }
    }
  }

  private static Path out(Path dir, String which, int i) {
    return dir.resolve(which + "-" + i + ".out");
  }
}
