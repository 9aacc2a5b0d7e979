package dev.pgworkflows.server.internal.audit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.AuditStore;
import dev.pgworkflows.server.ApiToken;
import dev.pgworkflows.server.Scope;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Operator actions, written twice: a row of {@code queue.audit} (what {@code GET /v1/audit} lists,
 * the same on every server) and a structured line on logger {@value #LOGGER}, one {@code key=value}
 * message whose pairs are also the event's key-value pairs (fields of their own with {@code
 * WORKFLOWS_LOG_FORMAT=json}). Actors are token names, never tokens.
 */
public final class AuditTrail {
  public static final String LOGGER = "pgworkflows.audit";

  /** The actor of every request when no tokens are configured (no token name to give). */
  public static final String PRESENCE_ONLY = "(presence-only)";

  /** The actor of configuration changes, recorded when a server starts. */
  public static final String CONFIGURATION = "(configuration)";

  /** The action of a change of the token configuration, recorded when a server starts. */
  public static final String TOKENS_CONFIGURED = "tokens.configured";

  private static final Logger log = LoggerFactory.getLogger(LOGGER);
  private static final Pattern BARE = Pattern.compile("[A-Za-z0-9_.:/*#(){}-]+");

  private final AuditStore store;

  public AuditTrail(AuditStore store) {
    this.store = store;
  }

  /** An operator action that was performed; {@code details} is a JSON object. */
  public record Action(
      String actor, String action, String target, ObjectNode details, String requestId) {}

  /**
   * Records a performed action. The action has happened already, so a failure to store its row does
   * not fail the request: the log line still goes out, saying the row is missing.
   */
  public void performed(Action a) {
    String details = Json.write(a.details());
    try {
      long id = store.record(a.actor(), a.action(), a.target(), details, a.requestId());
      line(log.atInfo(), a.action(), a.actor(), a.target(), details)
          .addKeyValue("auditId", id)
          .log(message("audit", a.action(), a.actor(), a.target(), details) + " auditId=" + id);
    } catch (RuntimeException e) {
      line(log.atError(), a.action(), a.actor(), a.target(), details)
          .addKeyValue("stored", false)
          .log(
              message("audit", a.action(), a.actor(), a.target(), details)
                  + " stored=false error="
                  + value(String.valueOf(e.getMessage())));
    }
  }

  /** A request refused for want of a scope: a log line only (a token could flood a table). */
  public static void refused(String actor, String route, Scope lacking) {
    ObjectNode details = Json.MAPPER.createObjectNode().put("lacking", lacking.wire());
    String json = Json.write(details);
    line(log.atWarn(), "request.refused", actor, route, json)
        .log(message("audit", "request.refused", actor, route, json));
  }

  /**
   * Records the token configuration a server starts with, names and scopes only, when it differs
   * from the last one recorded (several servers sharing a database record it once).
   */
  public void configured(List<ApiToken> tokens, boolean presenceOnly) {
    ObjectNode details = Json.MAPPER.createObjectNode();
    details.put("presenceOnly", presenceOnly);
    ArrayNode list = details.putArray("tokens");
    tokens.stream()
        .sorted(Comparator.comparing(ApiToken::name))
        .forEach(
            t -> {
              ObjectNode o = list.addObject().put("name", t.name());
              ArrayNode scopes = o.putArray("scopes");
              t.scopes().forEach(s -> scopes.add(s.wire()));
            });
    String json = Json.write(details);
    if (store.tokens(json)) {
      line(log.atInfo(), TOKENS_CONFIGURED, CONFIGURATION, null, json)
          .log(message("audit", TOKENS_CONFIGURED, CONFIGURATION, null, json));
    }
  }

  private static LoggingEventBuilder line(
      LoggingEventBuilder b, String action, String actor, String target, String details) {
    b = b.addKeyValue("action", action).addKeyValue("actor", actor);
    if (target != null) {
      b = b.addKeyValue("target", target);
    }
    return b.addKeyValue("details", details);
  }

  private static String message(
      String what, String action, String actor, String target, String details) {
    StringBuilder sb = new StringBuilder(what);
    sb.append(" action=").append(action).append(" actor=").append(value(actor));
    if (target != null) {
      sb.append(" target=").append(value(target));
    }
    return sb.append(" details=").append(details).toString();
  }

  /** A value as is when it needs no quotes, else JSON-quoted. */
  private static String value(String v) {
    return BARE.matcher(v).matches() ? v : Json.write(Json.MAPPER.getNodeFactory().textNode(v));
  }
}
