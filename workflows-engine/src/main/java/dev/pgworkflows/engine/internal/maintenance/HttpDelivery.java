package dev.pgworkflows.engine.internal.maintenance;

import dev.pgworkflows.engine.internal.store.Sql;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes outbox rows to their HTTP subscribers. A claim leases rows (so several servers share the
 * work) and counts the attempt; a 2xx marks a row delivered; anything else retries with exponential
 * backoff until the attempts run out and the row is marked dead. Delivery is at-least-once: a
 * receiver may see a delivery id twice and should de-duplicate on it.
 *
 * <p>Before each attempt the URL's host is resolved and vetted by {@link WebhookTargets}; a host
 * that now points at a refused address (loopback, private, metadata service...) is not connected
 * to, and the delivery is marked dead at once with the reason in {@code last_error}: a refusal is a
 * decision, and retrying would only ask again. A 3xx is a failed attempt like a 5xx: redirects are
 * never followed, since their target was never vetted. One pass at a time, its batch sent in
 * parallel, so at most a batch of connections is open.
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
  private final WebhookTargets targets;
  private final SSLSocketFactory tls = (SSLSocketFactory) SSLSocketFactory.getDefault();
  private final ExecutorService passes = Executors.newSingleThreadExecutor(daemon("webhook-pass"));
  private final ExecutorService senders = Executors.newCachedThreadPool(daemon("webhook"));
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean running = true;

  public HttpDelivery(
      Sql sql,
      Settings settings,
      ScheduledExecutorService scheduler,
      InstantSource clock,
      WebhookTargets targets) {
    this.sql = sql;
    this.settings = settings;
    this.scheduler = scheduler;
    this.clock = clock;
    this.targets = targets;
  }

  /** Starts the loop: a pass now and then every second, plus a pass per nudge. */
  public void start() {
    scheduler.scheduleWithFixedDelay(this::nudge, 1, 1, TimeUnit.SECONDS);
    nudge();
  }

  /** Asks for a pass soon (after a publish, or a NOTIFY from another server). */
  public void nudge() {
    if (running && scheduled.compareAndSet(false, true)) {
      try {
        // Not on the scheduler: a pass waits for its slowest receiver.
        passes.execute(this::pass);
      } catch (RejectedExecutionException e) {
        // Closed meanwhile: the next server to run picks the deliveries up.
      }
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
        CompletableFuture.allOf(
                batch.stream()
                    .map(d -> CompletableFuture.runAsync(() -> send(d), senders))
                    .toArray(CompletableFuture[]::new))
            .join();
      } while (running && batch.size() == BATCH);
    } catch (RuntimeException e) {
      log.warn("delivery pass failed: {}", e.getMessage());
    }
  }

  private void send(Delivery d) {
    byte[] body = d.body().getBytes(StandardCharsets.UTF_8);
    long now = clock.millis() / 1000;
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Content-Type", "application/json");
    headers.put("Webhook-Id", Long.toString(d.id()));
    headers.put("Webhook-Timestamp", Long.toString(now));
    headers.put("Webhook-Topic", d.topic());
    headers.put("Webhook-Attempt", Integer.toString(d.attempts()));
    if (d.secret() != null) {
      headers.put(
          "Webhook-Signature", Signatures.sign(d.secret(), Long.toString(d.id()), now, body));
    }
    try {
      URI url = new URI(d.url());
      if (url.getHost() == null) {
        throw new URISyntaxException(d.url(), "no host");
      }
      List<InetAddress> addresses = targets.vet(url.getHost());
      int status =
          WebhookPost.post(url, addresses, headers, body, settings.timeout(), scheduler, tls);
      if (status / 100 == 2) {
        finish(d, true, null, false);
      } else if (status / 100 == 3) {
        finish(d, false, "HTTP status " + status + " (redirects are not followed)", false);
      } else {
        finish(d, false, "HTTP status " + status, false);
      }
    } catch (WebhookTargets.Refused e) {
      finish(
          d,
          false,
          "refused before connecting: "
              + e.getMessage()
              + "; webhooks may not reach "
              + WebhookTargets.REFUSED_KINDS
              + " unless WORKFLOWS_WEBHOOK_ALLOW names them",
          true);
    } catch (URISyntaxException e) {
      finish(d, false, "the url cannot be delivered to: " + e.getMessage(), true);
    } catch (UnknownHostException e) {
      finish(d, false, "could not resolve " + e.getMessage(), false);
    } catch (IOException | RuntimeException e) {
      finish(d, false, e.toString(), false);
    }
  }

  /** Records an attempt; a {@code last} failure marks the delivery dead whatever its attempts. */
  private void finish(Delivery d, boolean ok, String error, boolean last) {
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
                  last ? 1 : settings.maxAttempts(),
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
    passes.shutdownNow();
    senders.shutdownNow();
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
