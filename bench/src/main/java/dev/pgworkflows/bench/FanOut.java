package dev.pgworkflows.bench;

import dev.pgworkflows.workflows.Branch;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fan-out and fan-in: one run whose body is one parallel group of {@code branches} no-op steps, run
 * again and again, one run at a time, by one worker. Each fan-out is timed from the group's call to
 * its return in the body (every branch run and journaled), and the server's request counter says
 * how many journal requests the group took.
 */
final class FanOut {
  private static final String STEPS_ROUTE = "route=\"/v1/workflows/{name}/runs/{runId}/steps\"";

  /**
   * What the measured fan-outs gave.
   *
   * @param stepsPerSecond branches journaled per second of fan-out, over all measured fan-outs
   * @param medianMs the median wall time of one fan-out
   * @param worstMs the longest one
   * @param requestsPerFanOut journal requests per fan-out, on average
   */
  record Result(double stepsPerSecond, double medianMs, double worstMs, double requestsPerFanOut) {}

  private final String url;
  private final WorkflowClient client;
  private final Map<Long, Double> groupMs = new ConcurrentHashMap<>();

  FanOut(String url, WorkflowClient client) {
    this.url = url;
    this.client = client;
  }

  /** {@code warmUps} unmeasured fan-outs, then {@code rounds} measured ones. */
  Result run(int branches, int warmUps, int rounds) throws Exception {
    Workflow<Integer, Integer> wf =
        Workflow.define("fan-out", Integer.class, Integer.class)
            .run(
                (ctx, seq) -> {
                  List<Branch<Integer>> group = new ArrayList<>(branches);
                  for (int i = 0; i < branches; i++) {
                    int k = i;
                    group.add(Branch.of("b" + k, Integer.class, () -> k));
                  }
                  long t0 = System.nanoTime();
                  int n = ctx.step().parallel(group).size();
                  groupMs.put(ctx.runId(), (System.nanoTime() - t0) / 1e6);
                  return n;
                });
    Worker worker = wf.serve(WorkerOptions.url(url).pollWait(Duration.ofSeconds(5)));
    try {
      for (int i = 0; i < warmUps; i++) {
        fanOut(wf, i);
      }
      double requests0 = journalRequests();
      List<Double> times = new ArrayList<>();
      for (int i = 0; i < rounds; i++) {
        times.add(fanOut(wf, i));
      }
      double requests = journalRequests() - requests0;
      double total = times.stream().mapToDouble(Double::doubleValue).sum();
      return new Result(
          (double) branches * rounds / (total / 1000),
          Stats.percentile(times, 50),
          Stats.percentile(times, 100),
          requests / rounds);
    } finally {
      worker.close();
    }
  }

  /** One fan-out, started and awaited; the wall time of its group in ms. */
  private double fanOut(Workflow<Integer, Integer> wf, int seq) {
    long run = client.start(wf, seq).runId();
    client.runs().awaitResult("fan-out", run, Integer.class, Duration.ofMinutes(1));
    return groupMs.get(run);
  }

  /** The journal requests the server has answered so far, from its Prometheus scrape. */
  private double journalRequests() throws Exception {
    HttpURLConnection c = (HttpURLConnection) URI.create(url + "/metrics").toURL().openConnection();
    String scrape;
    try (InputStream in = c.getInputStream()) {
      scrape = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    double n = 0;
    for (String line : scrape.split("\n")) {
      if (line.startsWith("http_server_requests_seconds_count{")
          && line.contains(STEPS_ROUTE)
          && line.contains("method=\"POST\"")) {
        n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return n;
  }
}
