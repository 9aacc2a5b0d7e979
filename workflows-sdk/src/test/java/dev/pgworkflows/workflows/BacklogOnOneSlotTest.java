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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker takes its next runs with the completions that end its last ones: with a backlog, a
 * long-polling worker of concurrency 1 runs it through on its one slot without a poll per run, and
 * every run ends with its steps journaled once.
 */
class BacklogOnOneSlotTest {
  private static final Pattern POLLS =
      Pattern.compile(
          "http_server_requests_seconds_count\\{[^}]*route=\"/v1/workflows/\\{name}/tasks/poll\"[^}]*}"
              + " ([0-9.E]+)");

  @RegisterExtension static final LiveServer server = new LiveServer();

  /** Poll requests the server has answered so far, all workflows together. */
  private static double polls() throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(server.url() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    double n = 0;
    Matcher m = POLLS.matcher(r.body());
    while (m.find()) {
      n += Double.parseDouble(m.group(1));
    }
    return n;
  }

  @Test
  void aBacklogRunsThroughWithoutAPollPerRun() throws Exception {
    Set<String> threads = ConcurrentHashMap.newKeySet();
    Workflow<Integer, Integer> wf =
        Workflow.define("take-back", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  threads.add(Thread.currentThread().getName());
                  int a = ctx.step().run("one", Integer.class, () -> n + 1);
                  return ctx.step().run("two", Integer.class, () -> a * 2);
                });
    int runs = 30;
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      ids.add(server.client().start(wf, i).runId());
    }
    double before = polls();
    Worker worker =
        wf.serve(
            WorkerOptions.url(server.url())
                .concurrency(1)
                .pollWait(Duration.ofSeconds(1))
                .taskStream(false));
    try {
      for (int i = 0; i < runs; i++) {
        assertThat(
                server
                    .client()
                    .runs()
                    .awaitResult("take-back", ids.get(i), Integer.class, Duration.ofSeconds(30)))
            .isEqualTo((i + 1) * 2);
      }
    } finally {
      worker.close();
    }
    double polled = polls() - before;
    assertThat(polled)
        .as("polls for %d runs on one slot", runs)
        .isLessThan(runs / 3.0)
        .isGreaterThanOrEqualTo(1);
    assertThat(threads).as("one runner thread").hasSize(1);
    for (long id : ids) {
      assertThat(server.client().runs().steps("take-back", id))
          .extracting(StepInfo::name)
          .containsExactly("one", "two");
    }
  }
}
