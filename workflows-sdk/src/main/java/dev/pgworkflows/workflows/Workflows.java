package dev.pgworkflows.workflows;

import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.KeyConcurrencyLimit;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.WorkerRouting;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * What a server holds per workflow ({@link WorkflowClient#workflows()}): its pause and its
 * concurrency limits. Needs scope {@code admin}.
 */
public final class Workflows {
  private final Transport transport;

  Workflows(Transport transport) {
    this.transport = transport;
  }

  /**
   * Sets how many runs of each concurrency key of {@code workflow} may run at once ({@code null}
   * removes the limit); runs over it wait, oldest start first, and start as slots free. Needs scope
   * {@code admin}. See {@link StartOptions.Builder#concurrencyKey}.
   */
  public void setConcurrencyLimit(String workflow, Integer limit) {
    Workflow.checkName(workflow);
    if (limit != null && (limit < 1 || limit > 100_000)) {
      throw new IllegalArgumentException("limit must be between 1 and 100000");
    }
    transport.send(
        "PUT",
        "/v1/workflows/" + workflow + "/concurrency",
        new ConcurrencyLimit(null, limit),
        Duration.ofSeconds(30));
  }

  /**
   * Sets {@code workflow}'s concurrency limit per key with its strategy and, optionally, the path
   * into a run's input that gives each key its limit (see {@link Concurrency}). Needs scope {@code
   * admin}. A bad setting is an {@link ApiException} (400) naming it, and nothing changes.
   */
  public void setConcurrency(String workflow, Concurrency concurrency) {
    Workflow.checkName(workflow);
    if (concurrency == null) {
      throw new IllegalArgumentException(
          "concurrency must not be null (setConcurrencyLimit with null removes the limit)");
    }
    transport.send(
        "PUT",
        "/v1/workflows/" + workflow + "/concurrency",
        concurrency.wire(),
        Duration.ofSeconds(30));
  }

  /** {@code workflow}'s concurrency limit per key, empty when it has none. Needs scope read. */
  public Optional<Concurrency> concurrency(String workflow) {
    Workflow.checkName(workflow);
    ConcurrencyLimit l =
        Transport.read(
            transport.get("/v1/workflows/" + workflow + "/concurrency"), ConcurrencyLimit.class);
    return l.limit() == null ? Optional.empty() : Optional.of(Concurrency.of(l));
  }

  /**
   * Throttles {@code workflow}'s starts (see {@link Throttle}): starts beyond the rate are queued
   * for their turn. Needs scope {@code admin}.
   */
  public void setThrottle(String workflow, Throttle throttle) {
    Workflow.checkName(workflow);
    if (throttle == null) {
      throw new IllegalArgumentException("throttle must not be null (removeThrottle removes it)");
    }
    transport.send(
        "PUT", "/v1/workflows/" + workflow + "/throttle", throttle.wire(), Duration.ofSeconds(30));
  }

  /** Removes {@code workflow}'s throttle; starts already queued keep their time. */
  public void removeThrottle(String workflow) {
    Workflow.checkName(workflow);
    transport.send(
        "PUT",
        "/v1/workflows/" + workflow + "/throttle",
        new ThrottleSettings(null, null, null, null, null),
        Duration.ofSeconds(30));
  }

  /** {@code workflow}'s throttle, empty when it has none. Needs scope read. */
  public Optional<Throttle> throttle(String workflow) {
    Workflow.checkName(workflow);
    ThrottleSettings t =
        Transport.read(
            transport.get("/v1/workflows/" + workflow + "/throttle"), ThrottleSettings.class);
    return t.limit() == null ? Optional.empty() : Optional.of(Throttle.of(t));
  }

  /**
   * Sets which workers take {@code workflow}'s runs (see {@link Routing}), in place of what its
   * workers' definitions set; {@link Routing#workers()} alone lets any worker take them. Runs
   * sticking to a worker stay with it until the registry stops listing it. Needs scope {@code
   * admin}.
   */
  public void setRouting(String workflow, Routing routing) {
    Workflow.checkName(workflow);
    if (routing == null) {
      throw new IllegalArgumentException("routing must not be null (Routing.workers() for any)");
    }
    transport.send(
        "PUT", "/v1/workflows/" + workflow + "/routing", routing.wire(), Duration.ofSeconds(30));
  }

  /** Which workers take {@code workflow}'s runs; empty when any worker does. Needs scope read. */
  public Optional<Routing> routing(String workflow) {
    Workflow.checkName(workflow);
    return Optional.ofNullable(
        Routing.of(
            Transport.read(
                transport.get("/v1/workflows/" + workflow + "/routing"), WorkerRouting.class)));
  }

  /**
   * Sets how many runs of {@code workflow} with concurrency key {@code key} may run at once, in
   * place of the workflow's limit for every other key ({@code null} removes the key's own limit, so
   * the workflow's holds again). Runs of the key waiting for a slot that the new limit lets through
   * start at once. Needs scope {@code admin}.
   */
  public void setKeyConcurrencyLimit(String workflow, String key, Integer limit) {
    Workflow.checkName(workflow);
    if (key == null || key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException("key must be 1 to 255 characters");
    }
    if (limit != null && (limit < 1 || limit > 100_000)) {
      throw new IllegalArgumentException("limit must be between 1 and 100000");
    }
    String path =
        "/v1/workflows/"
            + workflow
            + "/concurrency/"
            + URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20");
    if (limit == null) {
      try {
        transport.send("DELETE", path, null, Duration.ofSeconds(30));
      } catch (ApiException e) {
        if (e.status() != 404) {
          throw e;
        }
      }
      return;
    }
    transport.send("PUT", path, new KeyConcurrencyLimit(null, null, limit), Duration.ofSeconds(30));
  }

  /**
   * Pauses {@code workflow}: starts are still taken, but none of its runs is handed out until
   * {@link #resume}; a step running at the pause finishes and its run then waits. Needs scope
   * {@code admin}.
   */
  public void pause(String workflow) {
    Workflow.checkName(workflow);
    transport.post("/v1/workflows/" + workflow + "/pause", null);
  }

  /** Resumes a paused workflow: its due runs are handed out again. Needs scope {@code admin}. */
  public void resume(String workflow) {
    Workflow.checkName(workflow);
    transport.post("/v1/workflows/" + workflow + "/resume", null);
  }
}
