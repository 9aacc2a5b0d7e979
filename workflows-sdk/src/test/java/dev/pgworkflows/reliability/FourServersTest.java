package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four servers and six worker JVMs (one HTTP worker on each server, two JDBC workers with the
 * engine in their own process) on one PostgreSQL under a steady load of starts spread over the
 * servers. One server is SIGKILLed and restarted, then one worker JVM is SIGKILLed mid-load and not
 * brought back: every acknowledged start completes once, with its answer, each step journaled once.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("reliability")
class FourServersTest {
  private static final int SERVERS = 4;

  /** A start every 80 ms from each server's producer: 50 starts a second in all. */
  private static final long START_EVERY_MS = 80;

  @Test
  void aServerAndAWorkerKilledUnderLoadLoseNothing(@TempDir Path dir) throws Exception {
    TestDatabase db = TestDatabase.fresh();
    List<Map<String, String>> envs = new ArrayList<>();
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < SERVERS; i++) {
      int port = ServerJvms.freePort();
      envs.add(ServerJvms.env(db, port));
      urls.add("http://localhost:" + port);
    }
    Process[] servers = new Process[SERVERS];
    List<Process> workers = new ArrayList<>();
    try {
      for (int i = 0; i < SERVERS; i++) {
        servers[i] = startServer(dir, i, envs.get(i));
      }
      for (int i = 0; i < SERVERS; i++) {
        ChildJvm.awaitReady(urls.get(i), dir.resolve("server-" + i + ".out"));
      }
      for (int i = 0; i < SERVERS; i++) {
        workers.add(worker(dir, "http-" + i, "http", urls.get(i)));
      }
      for (int i = 0; i < 2; i++) {
        workers.add(worker(dir, "jdbc-" + i, "jdbc", db.jdbcUrl(), db.user(), db.password()));
      }
      Map<Long, Integer> acked = new ConcurrentHashMap<>();
      Map<String, Integer> refusals = new ConcurrentHashMap<>();
      AtomicInteger inputs = new AtomicInteger();
      List<SteadyStarts> producers = new ArrayList<>();
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
      try {
        Thread.sleep(6_000);
        ChildJvm.kill(servers[1]);
        int ackedBeforeRestart = producers.get(1).acked();
        Thread.sleep(3_000);
        servers[1] = startServer(dir, 1, envs.get(1));
        ChildJvm.awaitReady(urls.get(1), dir.resolve("server-1.out"));
        Thread.sleep(2_000);
        ChildJvm.kill(workers.get(2));
        Thread.sleep(6_000);
        assertThat(producers.get(1).acked())
            .as("starts acknowledged by the restarted server")
            .isGreaterThan(ackedBeforeRestart);
      } finally {
        for (SteadyStarts p : producers) {
          p.close();
        }
      }
      WorkflowClient reader = WorkflowClient.connect(urls.get(1));
      long t0 = System.nanoTime();
      long deadline = t0 + TimeUnit.SECONDS.toNanos(120);
      for (Map.Entry<Long, Integer> e : acked.entrySet()) {
        while (reader.runs().get(ScaleOutWorkflow.NAME, e.getKey()).status()
            != RunStatus.COMPLETED) {
          assertThat(System.nanoTime())
              .as("run %d still unfinished after 120 s", e.getKey())
              .isLessThan(deadline);
          Thread.sleep(100);
        }
      }
      for (Map.Entry<Long, Integer> e : acked.entrySet()) {
        RunInfo run = reader.runs().get(ScaleOutWorkflow.NAME, e.getKey());
        assertThat(run.output().asInt())
            .as("run %d", e.getKey())
            .isEqualTo(ScaleOutWorkflow.expected(e.getValue()));
        assertThat(reader.runs().steps(ScaleOutWorkflow.NAME, e.getKey()))
            .as("run %d", e.getKey())
            .extracting(StepInfo::name)
            .containsExactly("a", "b", "c");
      }
      System.out.printf(
          "four servers, six workers: %d acknowledged starts (%s by server), all completed once;"
              + " the last %d ms after the load stopped%n",
          acked.size(), producers, (System.nanoTime() - t0) / 1_000_000);
      for (SteadyStarts p : producers) {
        assertThat(p.acked()).as("starts acknowledged by each server").isGreaterThan(20);
      }
    } finally {
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

  private static Process startServer(Path dir, int i, Map<String, String> env) throws IOException {
    return ServerJvms.current(dir.resolve("server-" + i + ".out"), env);
  }

  private static Process worker(Path dir, String name, String... args) throws IOException {
    return ChildJvm.start(
        ScaleOutWorkflow.class, dir.resolve("worker-" + name + ".out"), Map.of(), args);
  }
}
