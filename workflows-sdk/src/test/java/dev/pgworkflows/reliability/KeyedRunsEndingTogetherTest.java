package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Many keyed runs under a small limit, sleeping (which frees a slot and asks for one again) and
 * ending at the same moments on three workers with batched completions: no run is ever left parked
 * once woken, none parked without a place in the waiting list, every run completes, and no key ever
 * has more runs in a step than its limit.
 */
@Tag("reliability")
class KeyedRunsEndingTogetherTest {
  private static final int RUNS = 300;
  private static final int KEYS = 3;
  private static final int LIMIT = 2;

  @Test
  void noWokenRunIsLeftParkedWhenManyEndAtOnce() throws Exception {
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      ConcurrentHashMap<Integer, AtomicInteger> inStep = new ConcurrentHashMap<>();
      AtomicInteger most = new AtomicInteger();
      Workflow<Integer, Integer> wf =
          Workflow.define("ending-together", Integer.class, Integer.class)
              .concurrency(LIMIT)
              .run(
                  (ctx, n) -> {
                    int key = n % KEYS;
                    for (String step : List.of("one", "two")) {
                      ctx.step()
                          .run(
                              step,
                              Integer.class,
                              () -> {
                                AtomicInteger c =
                                    inStep.computeIfAbsent(key, k -> new AtomicInteger());
                                most.accumulateAndGet(c.incrementAndGet(), Math::max);
                                Thread.sleep(5);
                                c.decrementAndGet();
                                return n;
                              });
                      ctx.step().sleep(step + "-nap", Duration.ofMillis(20));
                    }
                    return n;
                  });
      List<Long> runs = new ArrayList<>();
      for (int i = 0; i < RUNS; i++) {
        runs.add(
            client
                .start(wf, i, StartOptions.builder().concurrencyKey("k" + (i % KEYS)).build())
                .runId());
      }
      List<String> anomalies = new CopyOnWriteArrayList<>();
      AtomicBoolean sampling = new AtomicBoolean(true);
      Thread sampler = new Thread(() -> sample(server, anomalies, sampling));
      sampler.start();
      List<Worker> workers = new ArrayList<>();
      try {
        for (int w = 0; w < 3; w++) {
          workers.add(
              wf.serve(
                  WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(1)).concurrency(8)));
        }
        for (long run : runs) {
          client.runs().awaitResult("ending-together", run, Integer.class, Duration.ofSeconds(120));
        }
      } finally {
        workers.forEach(Worker::close);
        sampling.set(false);
        sampler.join();
      }
      assertThat(anomalies).as("runs left parked").isEmpty();
      assertThat(most.get()).as("runs of a key in a step at once").isLessThanOrEqualTo(LIMIT);
    }
  }

  /** Looks, every few milliseconds, for parked tasks no release will make due. */
  private static void sample(TestServer server, List<String> anomalies, AtomicBoolean sampling) {
    String query =
        "SELECT r.run_id, cw.woken FROM queue.workflow_run r"
            + " JOIN queue.q___wf_ending-together m ON m.msg_id = r.current_msg_id"
            + " LEFT JOIN queue.concurrency_wait cw ON cw.workflow_name = r.workflow_name"
            + "  AND cw.concurrency_key = r.concurrency_key AND cw.run_id = r.run_id"
            + " WHERE r.workflow_name = 'ending-together' AND r.status = 'running'"
            + " AND m.vt = queue.parked_vt() AND (cw.run_id IS NULL OR cw.woken)";
    try (Connection c = server.database().connect();
        Statement s = c.createStatement()) {
      while (sampling.get()) {
        try (ResultSet rs =
            s.executeQuery(query.replace("q___wf_ending-together", "\"q___wf_ending-together\""))) {
          while (rs.next()) {
            anomalies.add(
                "run "
                    + rs.getLong(1)
                    + (rs.getObject(2) == null ? " parked, not waiting" : " woken, parked")
                    + " at "
                    + System.currentTimeMillis());
          }
        } catch (java.sql.SQLException e) {
          if (!e.getMessage().contains("does not exist")) {
            throw e;
          }
        }
        Thread.sleep(5);
      }
    } catch (Exception e) {
      anomalies.add("sampler failed: " + e);
    }
  }
}
