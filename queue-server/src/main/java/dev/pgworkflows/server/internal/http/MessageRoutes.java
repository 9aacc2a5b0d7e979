package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.Timers;
import dev.pgworkflows.engine.internal.store.DeadLetterView;
import dev.pgworkflows.engine.internal.store.QueueStore;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;

/**
 * {@code /v1/queues/{queue}/messages} and dead letters: send, receive (long poll), ack. A send to a
 * workflow's queue {@code __wf_<name>} starts a run (queue.send does it); every other route that
 * changes or takes from such a queue answers 409.
 */
public final class MessageRoutes {
  /** One message to send. */
  record Outgoing(JsonNode body, ObjectNode headers, Integer delaySeconds, String groupId) {}

  /** Body of a send: one message's fields, or {@code messages} for a batch. */
  record Send(
      JsonNode body,
      ObjectNode headers,
      Integer delaySeconds,
      String groupId,
      List<Outgoing> messages) {}

  record Receive(
      Integer max, Integer visibilityTimeoutSeconds, Integer waitSeconds, ObjectNode match) {}

  record Visibility(Integer visibilityTimeoutSeconds) {}

  record Ids(List<Long> ids) {}

  private static final int MAX_DELAY = 31_536_000;

  private final QueueStore store;
  private final LongPoll longPoll;
  private final Timers timers;
  private final InstantSource clock;

  public MessageRoutes(QueueStore store, LongPoll longPoll, Timers timers, InstantSource clock) {
    this.store = store;
    this.longPoll = longPoll;
    this.timers = timers;
    this.clock = clock;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/queues/{queue}/messages", this::send);
    routes.post("/v1/queues/{queue}/messages/receive", this::receive);
    routes.post("/v1/queues/{queue}/messages/delete", this::deleteMany);
    routes.delete("/v1/queues/{queue}/messages/{id}", this::delete);
    routes.post("/v1/queues/{queue}/messages/{id}/visibility", this::visibility);
    routes.get("/v1/queues/{queue}/dead-letters", this::deadLetters);
    routes.post("/v1/queues/{queue}/dead-letters/redrive", this::redrive);
  }

  private void send(Context ctx) {
    String queue = Params.sendQueue(ctx);
    Send req = JsonBodies.read(ctx, Send.class);
    List<Long> ids;
    if (req.messages() != null) {
      if (req.body() != null
          || req.headers() != null
          || req.delaySeconds() != null
          || req.groupId() != null) {
        throw ApiException.badRequest(
            "messages", "send either one message's fields or a messages array, not both");
      }
      if (req.messages().isEmpty() || req.messages().size() > 1000) {
        throw ApiException.badRequest("messages", "messages must hold 1 to 1000 messages");
      }
      ArrayNode batch = Json.MAPPER.createArrayNode();
      for (int i = 0; i < req.messages().size(); i++) {
        Outgoing m = req.messages().get(i);
        String at = "messages[" + i + "]";
        if (m == null || m.body() == null) {
          throw ApiException.badRequest(at + ".body", "every message needs a body");
        }
        Params.range(at + ".delaySeconds", m.delaySeconds(), 0, 0, MAX_DELAY);
        groupId(at + ".groupId", m.groupId());
        StartHeaders.check(queue, m.headers(), at + ".headers");
        ObjectNode item = batch.addObject().set("body", m.body());
        if (m.headers() != null) {
          item.set("headers", m.headers());
        }
        if (m.delaySeconds() != null) {
          item.put("delaySeconds", m.delaySeconds());
        }
        if (m.groupId() != null) {
          item.put("groupId", m.groupId());
        }
      }
      ids = store.sendBatch(queue, Json.write(batch));
      int maxDelay =
          req.messages().stream()
              .mapToInt(m -> m.delaySeconds() == null ? 0 : m.delaySeconds())
              .max()
              .orElse(0);
      hintDelay(queue, maxDelay);
    } else {
      if (req.body() == null) {
        throw ApiException.badRequest("body", "body is required (JSON null is allowed)");
      }
      int delay = Params.range("delaySeconds", req.delaySeconds(), 0, 0, MAX_DELAY);
      groupId("groupId", req.groupId());
      StartHeaders.check(queue, req.headers(), "headers");
      ids =
          List.of(
              store.send(
                  queue,
                  Json.write(req.body()),
                  req.headers() == null ? null : Json.write(req.headers()),
                  delay,
                  req.groupId()));
      hintDelay(queue, delay);
      hintStartDelay(queue, req.headers());
    }
    JsonBodies.respond(ctx, 201, Map.of("ids", ids));
  }

  /** A delayed message sent through this server wakes this server's waiters when it is due. */
  private void hintDelay(String queue, int delaySeconds) {
    if (delaySeconds > 0 && delaySeconds <= 60) {
      timers.wakeAt(queue, clock.instant().plusSeconds(delaySeconds));
    }
  }

  /**
   * A start through a workflow's queue delayed by its {@code delayMs} header wakes this server's
   * waiters when it is due.
   */
  private void hintStartDelay(String queue, ObjectNode headers) {
    if (headers != null && queue.startsWith("__wf_")) {
      long ms = headers.path("delayMs").asLong(0);
      if (ms > 0 && ms <= 60_000) {
        timers.wakeAt(queue, clock.instant().plusMillis(ms));
      }
    }
  }

  private static void groupId(String field, String groupId) {
    if (groupId != null && (groupId.isEmpty() || groupId.length() > 128)) {
      throw ApiException.badRequest(field, "groupId must be 1 to 128 characters");
    }
  }

  private void receive(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "receive");
    Receive req =
        ctx.bodyAsBytes().length == 0
            ? new Receive(null, null, null, null)
            : JsonBodies.read(ctx, Receive.class);
    int max = Params.range("max", req.max(), 1, 1, 100);
    Integer vt =
        req.visibilityTimeoutSeconds() == null
            ? null
            : Params.range("visibilityTimeoutSeconds", req.visibilityTimeoutSeconds(), 0, 0, 43200);
    int wait =
        Params.range("waitSeconds", req.waitSeconds(), 0, 0, (int) LongPoll.MAX_WAIT.toSeconds());
    String match = req.match() == null ? null : Json.write(req.match());
    if (wait == 0) {
      JsonBodies.respond(ctx, 200, Map.of("messages", store.receive(queue, max, vt, match)));
      return;
    }
    var result =
        longPoll.poll(
            queue,
            match == null ? "" : match,
            null,
            wait * 1000L,
            max,
            () -> store.receive(queue, max, vt, match));
    if (result.isDone() && !result.isCompletedExceptionally()) {
      JsonBodies.respond(ctx, 200, Map.of("messages", result.join()));
      return;
    }
    ctx.future(
        () -> result.thenAccept(msgs -> JsonBodies.respond(ctx, 200, Map.of("messages", msgs))));
  }

  private void delete(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "delete");
    long id = Params.longPath(ctx, "id");
    if (!store.delete(queue, id)) {
      throw ApiException.notFound("message " + id + " does not exist in queue \"" + queue + "\"");
    }
    ctx.status(204);
  }

  private void deleteMany(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "delete");
    List<Long> ids = QueueRoutes.ids(JsonBodies.read(ctx, Ids.class).ids(), "ids");
    JsonBodies.respond(ctx, 200, Map.of("results", store.deleteMany(queue, ids)));
  }

  private void visibility(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "visibility change");
    long id = Params.longPath(ctx, "id");
    Visibility req = JsonBodies.read(ctx, Visibility.class);
    if (req.visibilityTimeoutSeconds() == null) {
      throw ApiException.badRequest(
          "visibilityTimeoutSeconds", "visibilityTimeoutSeconds is required");
    }
    int seconds =
        Params.range("visibilityTimeoutSeconds", req.visibilityTimeoutSeconds(), 0, 0, MAX_DELAY);
    Instant at =
        store
            .changeVisibility(queue, id, seconds)
            .orElseThrow(
                () ->
                    ApiException.notFound(
                        "message " + id + " does not exist in queue \"" + queue + "\""));
    hintDelay(queue, seconds);
    JsonBodies.respond(ctx, 200, Map.of("id", id, "visibleAt", at));
  }

  private void deadLetters(Context ctx) {
    String queue = Params.queue(ctx);
    int limit = Params.intQuery(ctx, "limit", 100, 1, 1000);
    long after = Params.longQuery(ctx, "after", 0);
    List<DeadLetterView> page = store.deadLetters(queue, limit, after);
    Map<String, Object> body =
        page.size() == limit
            ? Map.of("deadLetters", page, "next", page.get(page.size() - 1).deadId())
            : Map.of("deadLetters", page);
    JsonBodies.respond(ctx, 200, body);
  }

  private void redrive(Context ctx) {
    String queue = Params.notWorkflowQueue(ctx, "redrive");
    List<Long> ids = ctx.bodyAsBytes().length == 0 ? null : JsonBodies.read(ctx, Ids.class).ids();
    if (ids != null) {
      QueueRoutes.ids(ids, "ids");
    }
    JsonBodies.respond(ctx, 200, Map.of("redriven", store.redrive(queue, ids)));
  }
}
