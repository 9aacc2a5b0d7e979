package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Main;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
      int port = freePort();
      Map<String, String> env = new HashMap<>();
      env.put("WORKFLOWS_PORT", Integer.toString(port));
      env.put("DATABASE_URL", db.jdbcUrl());
      env.put("WORKFLOWS_DATABASE_USER", db.user());
      env.put("WORKFLOWS_DATABASE_PASSWORD", db.password());
      env.put("WORKFLOWS_DB_POOL_SIZE", "6");
      envs.add(env);
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
      List<WorkflowClient> clients = urls.stream().map(WorkflowClient::connect).toList();
      Map<Long, Integer> acked = new ConcurrentHashMap<>();
      AtomicInteger[] ackedBy = new AtomicInteger[SERVERS];
      AtomicBoolean producing = new AtomicBoolean(true);
      AtomicInteger inputs = new AtomicInteger();
      List<Thread> producers = new ArrayList<>();
      for (int i = 0; i < SERVERS; i++) {
        ackedBy[i] = new AtomicInteger();
        int server = i;
        Thread t =
            new Thread(
                () -> {
                  while (producing.get()) {
                    int n = inputs.incrementAndGet();
                    try {
                      acked.put(clients.get(server).start(ScaleOutWorkflow.NAME, n).runId(), n);
                      ackedBy[server].incrementAndGet();
                    } catch (RuntimeException e) {
                      // not acknowledged: not counted
                    }
                    try {
                      Thread.sleep(START_EVERY_MS);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                },
                "producer-" + i);
        t.start();
        producers.add(t);
      }
      try {
        Thread.sleep(6_000);
        ChildJvm.kill(servers[1]);
        int ackedBeforeRestart = ackedBy[1].get();
        Thread.sleep(3_000);
        servers[1] = startServer(dir, 1, envs.get(1));
        ChildJvm.awaitReady(urls.get(1), dir.resolve("server-1.out"));
        Thread.sleep(2_000);
        ChildJvm.kill(workers.get(2));
        Thread.sleep(6_000);
        assertThat(ackedBy[1].get())
            .as("starts acknowledged by the restarted server")
            .isGreaterThan(ackedBeforeRestart);
      } finally {
        producing.set(false);
        for (Thread t : producers) {
          t.join();
        }
      }
      WorkflowClient reader = clients.get(1);
      long t0 = System.nanoTime();
      long deadline = t0 + TimeUnit.SECONDS.toNanos(120);
      for (Map.Entry<Long, Integer> e : acked.entrySet()) {
        while (reader.get(ScaleOutWorkflow.NAME, e.getKey()).status() != RunStatus.COMPLETED) {
          assertThat(System.nanoTime())
              .as("run %d still unfinished after 120 s", e.getKey())
              .isLessThan(deadline);
          Thread.sleep(100);
        }
      }
      for (Map.Entry<Long, Integer> e : acked.entrySet()) {
        RunInfo run = reader.get(ScaleOutWorkflow.NAME, e.getKey());
        assertThat(run.output().asInt())
            .as("run %d", e.getKey())
            .isEqualTo(ScaleOutWorkflow.expected(e.getValue()));
        assertThat(reader.steps(ScaleOutWorkflow.NAME, e.getKey()))
            .as("run %d", e.getKey())
            .extracting(StepInfo::name)
            .containsExactly("a", "b", "c");
      }
      System.out.printf(
          "four servers, six workers: %d acknowledged starts (%s by server), all completed once;"
              + " the last %d ms after the load stopped%n",
          acked.size(), List.of(ackedBy), (System.nanoTime() - t0) / 1_000_000);
      for (AtomicInteger n : ackedBy) {
        assertThat(n.get()).as("starts acknowledged by each server").isGreaterThan(20);
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

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static Process startServer(Path dir, int i, Map<String, String> env) throws IOException {
    return ChildJvm.start(Main.class, dir.resolve("server-" + i + ".out"), env);
  }

  private static Process worker(Path dir, String name, String... args) throws IOException {
    return ChildJvm.start(
        ScaleOutWorkflow.class, dir.resolve("worker-" + name + ".out"), Map.of(), args);
  }
}
