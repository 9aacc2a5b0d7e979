package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.testing.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Many steps outliving the lease at once, on a worker whose every round trip to the server is slow:
 * their heartbeats go out side by side, so none waits behind the others past its lease, and no step
 * is run a second time by a redelivery.
 */
class HeartbeatsOverASlowNetworkTest {

  /**
   * 40 steps of 8 s on a 6 s lease, every chunk delayed 150 ms (a round trip 0.3 to 0.5 s). A
   * heartbeat goes every 2 s and gives up after 1.8 s, so each of the two beats within a lease has
   * more than a second to spare. Beats made one after another, as the worker once did, take 40
   * round trips (12 s and more) to go round all steps: half the leases run out before their beat,
   * and once the first steps end at 8 s the freed slots take those tasks again.
   */
  @Test
  void concurrentStepsLongerThanTheLeaseKeepTheirLeasesThroughASlowNetwork() throws Exception {
    int steps = 40;
    Map<Long, AtomicInteger> executions = new ConcurrentHashMap<>();
    Workflow<Integer, Integer> wf =
        Workflow.define("slow-beats", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  long runId = ctx.runId();
                  return ctx.step()
                      .run(
                          "long",
                          Integer.class,
                          () -> {
                            executions
                                .computeIfAbsent(runId, k -> new AtomicInteger())
                                .incrementAndGet();
                            Thread.sleep(8_000);
                            return n;
                          });
                });
    try (TestServer server = TestServer.start();
        FaultProxy proxy = FaultProxy.to("127.0.0.1", URI.create(server.url()).getPort())) {
      // Every chunk either way waits 150 ms: a round trip takes 0.3 to 0.5 s.
      proxy.latency(Duration.ofMillis(150));
      List<Long> runs = new ArrayList<>();
      Worker worker =
          wf.serve(
              WorkerOptions.url("http://127.0.0.1:" + proxy.port())
                  .lease(Duration.ofSeconds(6))
                  .concurrency(steps)
                  .pollWait(Duration.ofSeconds(5)));
      try {
        WorkflowClient client = WorkflowClient.connect(server.url());
        for (int i = 0; i < steps; i++) {
          runs.add(client.start("slow-beats", i).runId());
        }
        for (long id : runs) {
          assertThat(
                  client
                      .runs()
                      .awaitResult("slow-beats", id, Integer.class, Duration.ofSeconds(60)))
              .isNotNull();
        }
      } finally {
        worker.close();
      }
      assertThat(executions.keySet()).containsExactlyInAnyOrderElementsOf(runs);
      assertThat(executions.values()).allMatch(n -> n.get() == 1);
    }
  }
}
