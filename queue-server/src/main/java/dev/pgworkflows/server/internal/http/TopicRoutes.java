package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.maintenance.WebhookTargets;
import dev.pgworkflows.engine.internal.store.TopicStore;
import dev.pgworkflows.protocol.EventBatch;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.regex.Pattern;

/** {@code /v1/topics}: subscriptions by pattern, and publishing with fan-out. */
public final class TopicRoutes {
  record Subscribe(String type, String name, String url, String secret, EventBatch batch) {}

  record Publish(JsonNode body, ObjectNode headers) {}

  private static final Pattern TOPIC = Pattern.compile("[a-z0-9_-]+(\\.[a-z0-9_-]+)*");
  private static final Pattern PATTERN =
      Pattern.compile("([a-z0-9_-]+|\\*)(\\.([a-z0-9_-]+|\\*))*(\\.#)?|#");

  private final TopicStore store;
  private final Runnable deliveryNudge;
  private final WebhookTargets webhookTargets;

  public TopicRoutes(TopicStore store, Runnable deliveryNudge, WebhookTargets webhookTargets) {
    this.store = store;
    this.deliveryNudge = deliveryNudge;
    this.webhookTargets = webhookTargets;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/topics/{pattern}/subscriptions", this::subscribe);
    routes.get("/v1/topics/{pattern}/subscriptions", this::list);
    routes.get(
        "/v1/subscriptions",
        ctx -> JsonBodies.respond(ctx, 200, Map.of("subscriptions", store.list(null))));
    routes.delete("/v1/topics/{pattern}/subscriptions/{id}", this::unsubscribe);
    routes.post("/v1/topics/{topic}/messages", this::publish);
  }

  private static String pattern(Context ctx) {
    String p = ctx.pathParam("pattern");
    if (p.length() > 255 || !PATTERN.matcher(p).matches()) {
      throw ApiException.badRequest(
          "pattern",
          "a pattern is dot-separated segments of a-z, 0-9, \"_\" and \"-\", where \"*\" matches"
              + " one segment and a final \"#\" matches the rest");
    }
    return p;
  }

  private void subscribe(Context ctx) {
    String pattern = pattern(ctx);
    Subscribe req = JsonBodies.read(ctx, Subscribe.class);
    if (req.type() == null) {
      throw ApiException.badRequest("type", "type is required: queue, workflow, http or https");
    }
    String target;
    switch (req.type()) {
      case "queue", "workflow" -> {
        if (req.name() == null || req.url() != null) {
          throw ApiException.badRequest(
              "name", "a " + req.type() + " subscription takes a name and no url");
        }
        target = req.name();
      }
      case "http", "https" -> {
        if (req.url() == null || req.name() != null) {
          throw ApiException.badRequest("url", "an http subscription takes a url and no name");
        }
        checkWebhookTarget(req.url());
        target = req.url();
      }
      default -> throw ApiException.badRequest("type", "type must be one of queue, http, https");
    }
    EventBatch batch = req.batch();
    if (batch != null) {
      checkBatch(req.type(), batch);
    }
    TopicStore.Subscribed s = store.subscribe(pattern, req.type(), target, req.secret(), batch);
    TopicStore.Subscription view =
        store.list(pattern).stream().filter(x -> x.id() == s.id()).findFirst().orElseThrow();
    JsonBodies.respond(ctx, s.created() ? 201 : 200, view);
  }

  /** Batch settings: a workflow subscription's, maxSize 1 to 1000 and timeoutMs up to a day. */
  private static void checkBatch(String type, EventBatch batch) {
    if (!type.equals("workflow")) {
      throw ApiException.badRequest("batch", "batch goes with a workflow subscription only");
    }
    if (batch.maxSize() == null || batch.maxSize() < 1 || batch.maxSize() > 1000) {
      throw ApiException.badRequest(
          "batch.maxSize", "batch.maxSize is required, from 1 to 1000 messages");
    }
    if (batch.timeoutMs() == null || batch.timeoutMs() < 1 || batch.timeoutMs() > 86_400_000) {
      throw ApiException.badRequest(
          "batch.timeoutMs", "batch.timeoutMs is required, from 1 ms to a day (86400000)");
    }
    if (batch.key() != null && (!batch.key().startsWith("$") || batch.key().length() > 255)) {
      throw ApiException.badRequest(
          "batch.key",
          "batch.key must be a JSON path of at most 255 characters, such as $.customerId");
    }
  }

  /**
   * Refuses a URL whose host is, or resolves to, an address webhooks may not reach. A name that
   * does not resolve now is let through: delivery resolves and vets it again before every attempt,
   * which is also what catches a name that points elsewhere later.
   */
  private void checkWebhookTarget(String url) {
    String host;
    try {
      host = new URI(url).getHost();
    } catch (URISyntaxException e) {
      throw ApiException.badRequest("url", "url is not a valid URL: " + e.getMessage());
    }
    if (host == null) {
      throw ApiException.badRequest(
          "url",
          "url must be an absolute http:// or https:// URL whose host is a name (letters, digits,"
              + " \"-\" and \".\") or an IP address");
    }
    try {
      webhookTargets.vet(host);
    } catch (WebhookTargets.Refused e) {
      throw ApiException.badRequest(
          "url",
          "url refused: "
              + e.getMessage()
              + "; webhooks may not reach "
              + WebhookTargets.REFUSED_KINDS
              + " unless WORKFLOWS_WEBHOOK_ALLOW names them");
    } catch (UnknownHostException e) {
      // Checked at delivery.
    }
  }

  private void list(Context ctx) {
    JsonBodies.respond(ctx, 200, Map.of("subscriptions", store.list(pattern(ctx))));
  }

  private void unsubscribe(Context ctx) {
    String pattern = pattern(ctx);
    long id = Params.longPath(ctx, "id");
    boolean ours = store.list(pattern).stream().anyMatch(s -> s.id() == id);
    if (!ours || !store.unsubscribe(id)) {
      throw ApiException.notFound(
          "subscription " + id + " of pattern \"" + pattern + "\" does not exist");
    }
    ctx.status(204);
  }

  private void publish(Context ctx) {
    String topic = ctx.pathParam("topic");
    if (topic.length() > 255 || !TOPIC.matcher(topic).matches()) {
      throw ApiException.badRequest(
          "topic", "a topic is dot-separated segments of a-z, 0-9, \"_\" and \"-\"");
    }
    Publish req = JsonBodies.read(ctx, Publish.class);
    if (req.body() == null) {
      throw ApiException.badRequest("body", "body is required (JSON null is allowed)");
    }
    TopicStore.Published out =
        store.publish(
            topic,
            Json.write(req.body()),
            req.headers() == null ? null : Json.write(req.headers()));
    if (out.deliveries().stream().anyMatch(f -> f.type().startsWith("http"))) {
      deliveryNudge.run();
    }
    JsonBodies.respond(ctx, 201, out);
  }
}
