package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Main;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two servers on one database under load; one is SIGKILLed and later restarted. Workers of the
 * surviving server carry on, the killed server's runs are taken over when their leases expire, the
 * restarted server rejoins, and no acknowledged start is lost.
 */
@Tag("reliability")
class TwoServersTest {

  @Test
  void killingOneServerLosesNothing(@TempDir Path dir) throws Exception {
    TestDatabase db = TestDatabase.fresh();
    int portA;
    try (ServerSocket s = new ServerSocket(0)) {
      portA = s.getLocalPort();
    }
    Map<String, String> envA =
        Map.of(
            "WORKFLOWS_PORT", Integer.toString(portA),
            "DATABASE_URL", db.jdbcUrl(),
            "WORKFLOWS_DATABASE_USER", db.user(),
            "WORKFLOWS_DATABASE_PASSWORD", db.password(),
            "WORKFLOWS_DB_POOL_SIZE", "8");
    String urlA = "http://localhost:" + portA;
    Process a = startA(dir, envA, urlA);
    try (TestServer b = TestServer.start(db, Map.of())) {
      Workflow<Integer, Integer> wf =
          Workflow.define("twosrv", Integer.class, Integer.class)
              .run(
                  (ctx, n) -> {
                    int x = ctx.step().run("a", Integer.class, () -> n);
                    int y = ctx.step().run("b", Integer.class, () -> x + 1);
                    return ctx.step().run("c", Integer.class, () -> y + 1);
                  });
      WorkerOptions opts =
          WorkerOptions.url(urlA).pollWait(Duration.ofSeconds(1)).lease(Duration.ofSeconds(3));
      Worker onA = wf.serve(opts);
      Worker onB =
          wf.serve(
              WorkerOptions.url(b.url())
                  .pollWait(Duration.ofSeconds(1))
                  .lease(Duration.ofSeconds(3)));
      WorkflowClient clientA = WorkflowClient.connect(urlA);
      WorkflowClient clientB = WorkflowClient.connect(b.url());
      Set<Long> acked = ConcurrentHashMap.newKeySet();
      AtomicBoolean producing = new AtomicBoolean(true);
      Thread producer =
          new Thread(
              () -> {
                for (int i = 0; producing.get(); i++) {
                  WorkflowClient c = i % 2 == 0 ? clientA : clientB;
                  try {
                    acked.add(c.start("twosrv", i).runId());
                  } catch (RuntimeException e) {
                    // not acknowledged
                  }
                }
              });
      producer.start();
      try {
        Thread.sleep(2_000);
        ChildJvm.kill(a);
        Thread.sleep(3_000);
        a = startA(dir, envA, urlA);
        Thread.sleep(2_000);
      } finally {
        producing.set(false);
        producer.join();
      }
      try {
        Awaitility.await()
            .atMost(90, TimeUnit.SECONDS)
            .pollInterval(Duration.ofMillis(500))
            .until(
                () ->
                    acked.stream()
                        .allMatch(
                            id ->
                                clientB.runs().get("twosrv", id).status() == RunStatus.COMPLETED));
        for (long id : acked) {
          assertThat(clientB.runs().steps("twosrv", id))
              .extracting(StepInfo::name)
              .containsExactly("a", "b", "c");
        }
        // The restarted server serves again.
        assertThat(clientA.runs().get("twosrv", acked.iterator().next()).status())
            .isEqualTo(RunStatus.COMPLETED);
        System.out.printf(
            "two servers: %d acknowledged starts, all completed after a SIGKILL%n", acked.size());
        assertThat(acked).hasSizeGreaterThan(20);
      } finally {
        onA.close();
        onB.close();
      }
    } finally {
      ChildJvm.kill(a);
    }
  }

  private static Process startA(Path dir, Map<String, String> env, String url) throws Exception {
    Process p = ChildJvm.start(Main.class, dir.resolve("server-a.out"), env);
    ChildJvm.awaitReady(url, dir.resolve("server-a.out"));
    return p;
  }
}
