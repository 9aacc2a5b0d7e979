package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.PgWorkflows;
import dev.pgworkflows.workflows.WorkerMetrics;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
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

  /** Null unless the engine runs in this application (pgworkflows.mode=embedded). */
  private final PgWorkflows embedded;

  /** {@code workers} null when this application serves no workflows. */
  public WorkflowsHealthIndicator(String url, WorkflowWorkers workers) {
    this(url, workers, null);
  }

  /**
   * As the other constructor; with {@code embedded}, the health is its database's (reachable or
   * not) and whether this application runs the background jobs now, instead of a server's.
   */
  public WorkflowsHealthIndicator(String url, WorkflowWorkers workers, PgWorkflows embedded) {
    this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    this.workers = workers;
    this.embedded = embedded;
    this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  }

  @Override
  public Health health() {
    Health.Builder health = embedded != null ? database() : ready();
    if (embedded != null) {
      health.withDetail("mode", "embedded");
      health.withDetail("leadsBackgroundJobs", embedded.leadsBackgroundJobs());
    } else {
      health.withDetail("server", url);
    }
    if (workers != null) {
      health.withDetail("workers", workers());
    }
    return health.build();
  }

  /** Up when the engine's database answers a check within the timeout. */
  private Health.Builder database() {
    try (Connection c = embedded.dataSource().getConnection()) {
      return c.isValid((int) TIMEOUT.toSeconds())
          ? Health.up().withDetail("database", "reachable")
          : Health.down().withDetail("database", "did not answer a check");
    } catch (SQLException e) {
      return Health.down().withDetail("error", "database unreachable: " + e.getMessage());
    }
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
