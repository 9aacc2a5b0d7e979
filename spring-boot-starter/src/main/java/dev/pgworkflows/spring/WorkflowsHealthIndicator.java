package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.WorkerMetrics;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * UP while the server answers its {@code /readyz} with 200 (it reaches its database, whose schema
 * it expects); DOWN when it answers otherwise or cannot be reached within the timeout. The details
 * carry the server's answer and, when this application serves workflows, each worker's slots.
 * Workers do not change the status: a worker whose server is down retries on its own.
 */
public final class WorkflowsHealthIndicator implements HealthIndicator {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  private final String url;
  private final WorkflowWorkers workers;
  private final HttpClient http;

  /** {@code workers} null when this application serves no workflows. */
  public WorkflowsHealthIndicator(String url, WorkflowWorkers workers) {
    this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    this.workers = workers;
    this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  }

  @Override
  public Health health() {
    Health.Builder health = ready();
    health.withDetail("server", url);
    if (workers != null) {
      health.withDetail("workers", workers());
    }
    return health.build();
  }

  private Health.Builder ready() {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + "/readyz")).timeout(TIMEOUT).GET().build();
    try {
      HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
      Health.Builder health = answer.statusCode() == 200 ? Health.up() : Health.down();
      return health.withDetail("readyz", answer.statusCode() + " " + answer.body());
    } catch (IOException e) {
      return Health.down().withDetail("error", "server unreachable: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Health.unknown().withDetail("error", "interrupted");
    }
  }

  private Map<String, Object> workers() {
    Map<String, Object> all = new LinkedHashMap<>();
    all.put("running", workers.isRunning());
    workers
        .workers()
        .keySet()
        .forEach(
            name -> {
              WorkerMetrics m = workers.metrics(name);
              all.put(name, Map.of("slots", m.slots(), "busySlots", m.busySlots()));
            });
    return all;
  }
}
