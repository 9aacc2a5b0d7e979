package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Starts made by many threads at once share requests, and each caller gets its own answer. */
class ConcurrentStartsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void concurrentStartsShareRequestsAndEachGetsItsRun() {
    int n = 400;
    double before = startRequests();
    ExecutorService pool = Executors.newFixedThreadPool(32);
    try {
      List<CompletableFuture<Started>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int input = i;
        fs.add(CompletableFuture.supplyAsync(() -> server.client().start("crowd", input), pool));
      }
      Set<Long> ids = new HashSet<>();
      for (int i = 0; i < n; i++) {
        Started s = fs.get(i).join();
        assertThat(s.created()).isTrue();
        assertThat(s.status()).isEqualTo(RunStatus.RUNNING);
        ids.add(s.runId());
        // Each caller's answer is its own run: the input it gave.
        assertThat(server.client().runs().get("crowd", s.runId()).input().asInt()).isEqualTo(i);
      }
      assertThat(ids).hasSize(n);
    } finally {
      pool.shutdownNow();
    }
    assertThat(server.client().runs().list("crowd", null, null, 1000).runs()).hasSize(n);
    assertThat(startRequests() - before).isPositive().isLessThan(n);
  }

  @Test
  void aRejectedStartFailsOnlyItsCaller() {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<CompletableFuture<Object>> fs = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        int input = i;
        fs.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    // Every eighth asks for a retention the server refuses.
                    return input % 8 == 0
                        ? server
                            .client()
                            .start(
                                "picky",
                                input,
                                StartOptions.builder().retentionDays(40_000).build())
                        : server.client().start("picky", input);
                  } catch (ApiException e) {
                    return e;
                  }
                },
                pool));
      }
      for (int i = 0; i < 64; i++) {
        Object r = fs.get(i).join();
        if (i % 8 == 0) {
          assertThat(r).isInstanceOf(ApiException.class);
          assertThat(((ApiException) r).status()).isEqualTo(400);
        } else {
          assertThat(r).isInstanceOf(Started.class);
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(server.client().runs().list("picky", null, null, 1000).runs()).hasSize(56);
  }

  /** Requests to the two start routes so far, from the server's /metrics. */
  private static double startRequests() {
    return server
        .api()
        .get("/metrics")
        .body()
        .lines()
        .filter(
            l ->
                l.startsWith("http_server_requests_seconds_count")
                    && (l.contains("route=\"/v1/workflows/{name}/runs\"")
                        || l.contains("route=\"/v1/workflows/{name}/runs/batch\""))
                    && l.contains("method=\"POST\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }
}
