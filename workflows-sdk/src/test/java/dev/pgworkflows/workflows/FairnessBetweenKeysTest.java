package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Under a total limit, a tenant with a thousand queued jobs does not hold back two tenants that
 * come later with ten each: the worker JVM serves them in turn, the one of weight 2 twice as often,
 * and both are done while the first tenant's backlog is nearly untouched.
 */
class FairnessBetweenKeysTest {

  private static StartOptions key(String key) {
    return StartOptions.builder().concurrencyKey(key).build();
  }

  @Test
  void latecomersAreServedInTurnAndByWeightNotBehindABacklog(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("executions.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      Process worker =
          WorkerJvm.start(
              TenantJobsWorkflow.class, dir.resolve("worker.out"), server.url(), log.toString());
      ExecutorService starts = Executors.newFixedThreadPool(4);
      try {
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> client.workflows().concurrency("tenant-jobs").isPresent());
        List<Future<Started>> backlog = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
          int id = i;
          backlog.add(
              starts.submit(
                  () ->
                      client.start("tenant-jobs", new TenantJobsWorkflow.Job("a", id), key("a"))));
        }
        long lastOfA = 0;
        for (Future<Started> f : backlog) {
          lastOfA = Math.max(lastOfA, f.get(60, TimeUnit.SECONDS).runId());
        }
        long newestA = lastOfA;
        // The backlog is queued: its newest job waits for one of the two shared slots.
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(
                () ->
                    client.runs().blockers("tenant-jobs", newestA).stream()
                        .anyMatch(b -> b.kind().equals("concurrency")));

        // The latecomers arrive together: with the workflow paused while they are started, none
        // is served before the last has come, so the order they are served in is the round's
        // alone, not how fast the starts came in.
        assertThat(server.api().post("/v1/workflows/tenant-jobs/pause", null).status())
            .isEqualTo(200);
        List<Started> late = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          late.add(client.start("tenant-jobs", new TenantJobsWorkflow.Job("b", i), key("b")));
          late.add(client.start("tenant-jobs", new TenantJobsWorkflow.Job("c", i), key("c")));
        }
        assertThat(server.api().post("/v1/workflows/tenant-jobs/resume", null).status())
            .isEqualTo(200);
        for (Started s : late) {
          client
              .runs()
              .awaitResult("tenant-jobs", s.runId(), Integer.class, Duration.ofSeconds(60));
        }

        List<String> served = Files.readAllLines(log);
        int firstLate = indexOf(served, "b 0", "c 0");
        List<String> window = served.subList(firstLate, lastIndexOf(served, "b ", "c ") + 1);
        long a = window.stream().filter(l -> l.startsWith("a ")).count();
        long aBefore =
            served.subList(0, firstLate).stream().filter(l -> l.startsWith("a ")).count();
        assertThat(a + aBefore)
            .as("jobs of a done by the time b and c are: %s", served.size())
            .isLessThan(500);
        assertThat(a).as("a's turns while b and c were served").isBetween(5L, 14L);
        // Until b's tenth job, b (weight 2) was served about twice for each turn of c: five, give
        // or take what the two slots running at once do to the order the jobs log in. Weights
        // ignored would give c ten.
        List<String> untilB = window.subList(0, window.indexOf("b 9") + 1);
        long c = untilB.stream().filter(l -> l.startsWith("c ")).count();
        assertThat(c).as("c's turns while b did its ten: %s", untilB).isBetween(4L, 7L);
      } finally {
        starts.shutdownNow();
        worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private static int indexOf(List<String> lines, String... any) {
    for (int i = 0; i < lines.size(); i++) {
      if (List.of(any).contains(lines.get(i))) {
        return i;
      }
    }
    throw new AssertionError("none of " + List.of(any) + " in " + lines);
  }

  private static int lastIndexOf(List<String> lines, String... prefixes) {
    int last = -1;
    for (int i = 0; i < lines.size(); i++) {
      for (String p : prefixes) {
        if (lines.get(i).startsWith(p)) {
          last = i;
        }
      }
    }
    return last;
  }
}
