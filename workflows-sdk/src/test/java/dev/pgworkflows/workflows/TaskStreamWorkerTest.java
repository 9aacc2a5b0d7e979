package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker with {@code taskStream} takes its tasks from a task stream: a backlog runs through
 * without a poll, with every run's steps journaled once; a stream held back on the way (a proxy
 * that buffers answers) gives way to polls; and a worker that closes in the middle leaves no task
 * stranded until its lease runs out.
 */
class TaskStreamWorkerTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  /** Requests the server has answered on {@code route} so far, all workflows together. */
  private static double requests(String route) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(server.url() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    Pattern p =
        Pattern.compile(
            "http_server_requests_seconds_count\\{[^}]*route=\""
                + Pattern.quote(route)
                + "\"[^}]*} ([0-9.E]+)");
    double n = 0;
    Matcher m = p.matcher(r.body());
    while (m.find()) {
      n += Double.parseDouble(m.group(1));
    }
    return n;
  }

  @Test
  void aBacklogRunsThroughOneStreamWithoutPolls() throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("streamed", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  int a = ctx.step().run("one", Integer.class, () -> n + 1);
                  return ctx.step().run("two", Integer.class, () -> a * 2);
                });
    int runs = 30;
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      ids.add(server.client().start(wf, i).runId());
    }
    double polls = requests("/v1/workflows/{name}/tasks/poll");
    Worker worker =
        wf.serve(
            WorkerOptions.url(server.url())
                .concurrency(1)
                .pollWait(Duration.ofSeconds(10))
                .taskStream(true));
    try {
      for (int i = 0; i < runs; i++) {
        assertThat(
                server
                    .client()
                    .runs()
                    .awaitResult("streamed", ids.get(i), Integer.class, Duration.ofSeconds(30)))
            .isEqualTo((i + 1) * 2);
      }
    } finally {
      worker.close();
    }
    assertThat(requests("/v1/workflows/{name}/tasks/poll") - polls).as("polls").isZero();
    for (long id : ids) {
      assertThat(server.client().runs().steps("streamed", id))
          .extracting(StepInfo::name)
          .containsExactly("one", "two");
    }
  }

  @Test
  void aStreamHeldBackOnTheWayGivesWayToPollsAndStrandsNothing() throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("streamed-held", Integer.class, Integer.class)
            .run((ctx, n) -> ctx.step().run("one", Integer.class, () -> n + 1));
    // Due before the worker comes, so its first stream takes them, and the proxy holds them.
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(server.client().start(wf, i).runId());
    }
    double polls = requests("/v1/workflows/{name}/tasks/poll");
    try (HoldingProxy proxy = new HoldingProxy(server.url())) {
      // Leases of a minute: a task left in the held stream would outlast the wait below.
      Worker worker =
          wf.serve(
              WorkerOptions.url(proxy.url())
                  .concurrency(4)
                  .pollWait(Duration.ofSeconds(10))
                  .lease(Duration.ofSeconds(60))
                  .taskStream(true));
      try {
        for (int i = 0; i < ids.size(); i++) {
          assertThat(
                  server
                      .client()
                      .runs()
                      .awaitResult(
                          "streamed-held", ids.get(i), Integer.class, Duration.ofSeconds(30)))
              .isEqualTo(i + 1);
        }
        assertThat(proxy.streamsHeld()).as("streams asked for through the proxy").isEqualTo(1);
        assertThat(requests("/v1/workflows/{name}/tasks/poll") - polls).as("polls").isPositive();
      } finally {
        worker.close();
      }
    }
    for (long id : ids) {
      assertThat(server.client().runs().steps("streamed-held", id))
          .extracting(StepInfo::name)
          .containsExactly("one");
    }
  }

  @Test
  void aClosingWorkerLeavesNothingStrandedForItsLease() throws Exception {
    AtomicInteger stepped = new AtomicInteger();
    Workflow<Integer, Integer> wf =
        Workflow.define("streamed-close", Integer.class, Integer.class)
            .run(
                (ctx, n) ->
                    ctx.step()
                        .run(
                            "slow",
                            Integer.class,
                            () -> {
                              stepped.incrementAndGet();
                              Thread.sleep(100);
                              return n;
                            }));
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      ids.add(server.client().start(wf, i).runId());
    }
    // Leases of a minute: a task stranded by the first worker would outlast the waits below.
    WorkerOptions options =
        WorkerOptions.url(server.url())
            .concurrency(2)
            .pollWait(Duration.ofSeconds(10))
            .lease(Duration.ofSeconds(60))
            .taskStream(true);
    Worker first = wf.serve(options);
    while (stepped.get() < 2) {
      Thread.sleep(10);
    }
    first.close();
    Worker second = wf.serve(options);
    try {
      for (int i = 0; i < ids.size(); i++) {
        assertThat(
                server
                    .client()
                    .runs()
                    .awaitResult(
                        "streamed-close", ids.get(i), Integer.class, Duration.ofSeconds(20)))
            .isEqualTo(i);
      }
    } finally {
      second.close();
    }
  }
}
