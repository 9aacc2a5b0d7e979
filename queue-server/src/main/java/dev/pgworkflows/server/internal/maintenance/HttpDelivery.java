package dev.pgworkflows.server.internal.maintenance;

import dev.pgworkflows.server.internal.store.Sql;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes outbox rows to their HTTP subscribers. A claim leases rows (so several servers share the
 * work) and counts the attempt; a 2xx marks a row delivered; anything else retries with exponential
 * backoff until the attempts run out and the row is marked dead. Delivery is at-least-once: a
 * receiver may see a delivery id twice and should de-duplicate on it.
 */
public final class HttpDelivery implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HttpDelivery.class);
  private static final int BATCH = 32;

  /** Retry policy and per-attempt timeout. */
  public record Settings(int maxAttempts, Duration timeout, Duration backoffBase) {}

  private record Delivery(
      long id, String url, String secret, String topic, String body, int attempts) {}

  private final Sql sql;
  private final Settings settings;
  private final ScheduledExecutorService scheduler;
  private final InstantSource clock;
  private final HttpClient http;
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean running = true;

  public HttpDelivery(
      Sql sql, Settings settings, ScheduledExecutorService scheduler, InstantSource clock) {
    this.sql = sql;
    this.settings = settings;
    this.scheduler = scheduler;
    this.clock = clock;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(settings.timeout())
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /** Starts the loop: a pass now and then every second, plus a pass per nudge. */
  public void start() {
    scheduler.scheduleWithFixedDelay(this::nudge, 1, 1, TimeUnit.SECONDS);
    nudge();
  }

  /** Asks for a pass soon (after a publish, or a NOTIFY from another server). */
  public void nudge() {
    if (running && scheduled.compareAndSet(false, true)) {
      scheduler.execute(this::pass);
    }
  }

  private void pass() {
    scheduled.set(false);
    try {
      List<Delivery> batch;
      do {
        long leaseSeconds = settings.timeout().toSeconds() + 30;
        batch =
            sql.list(
                "SELECT delivery_id, url, secret, topic, body::text, attempts"
                    + " FROM queue.claim_deliveries(?, ?)",
                rs ->
                    new Delivery(
                        rs.getLong(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getInt(6)),
                BATCH,
                (int) leaseSeconds);
        for (Delivery d : batch) {
          send(d);
        }
      } while (running && batch.size() == BATCH);
    } catch (RuntimeException e) {
      log.warn("delivery pass failed: {}", e.getMessage());
    }
  }

  private void send(Delivery d) {
    byte[] body = d.body().getBytes(StandardCharsets.UTF_8);
    long now = clock.millis() / 1000;
    HttpRequest.Builder req =
        HttpRequest.newBuilder(URI.create(d.url()))
            .timeout(settings.timeout())
            .header("Content-Type", "application/json")
            .header("Webhook-Id", Long.toString(d.id()))
            .header("Webhook-Timestamp", Long.toString(now))
            .header("Webhook-Topic", d.topic())
            .header("Webhook-Attempt", Integer.toString(d.attempts()))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (d.secret() != null) {
      req.header(
          "Webhook-Signature", Signatures.sign(d.secret(), Long.toString(d.id()), now, body));
    }
    http.sendAsync(req.build(), HttpResponse.BodyHandlers.discarding())
        .whenComplete(
            (resp, err) -> {
              boolean ok = err == null && resp.statusCode() / 100 == 2;
              String error =
                  ok ? null : err != null ? err.toString() : "HTTP status " + resp.statusCode();
              finish(d, ok, error);
            });
  }

  private void finish(Delivery d, boolean ok, String error) {
    long backoff =
        Math.min(
            settings.backoffBase().toMillis() << Math.min(d.attempts() - 1, 20),
            TimeUnit.MINUTES.toMillis(10));
    try {
      String status =
          sql.one(
                  "SELECT queue.finish_delivery(?::bigint, ?, ?, ?, ?::bigint)",
                  rs -> rs.getString(1),
                  d.id(),
                  ok,
                  error,
                  settings.maxAttempts(),
                  backoff)
              .orElse(null);
      if ("dead".equals(status)) {
        log.warn(
            "delivery {} to {} gave up after {} attempts: {}",
            d.id(),
            d.url(),
            d.attempts(),
            error);
      } else if (!ok) {
        scheduler.schedule(this::nudge, backoff, TimeUnit.MILLISECONDS);
      }
    } catch (RuntimeException e) {
      // The lease runs out and the delivery is tried again.
      log.warn("could not record delivery {}: {}", d.id(), e.getMessage());
    }
  }

  @Override
  public void close() {
    running = false;
  }
}
