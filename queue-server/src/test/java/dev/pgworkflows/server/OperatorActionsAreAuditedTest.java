package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.LogCapture;
import dev.pgworkflows.testing.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every operator action a server performs is on the audit trail twice: a structured line of logger
 * {@code pgworkflows.audit} and a row {@code GET /v1/audit} lists, both with the token's name and
 * never the token. So is each change of the tokens' names and scopes, once, when a server starts.
 */
class OperatorActionsAreAuditedTest {
  private static final String TOKENS =
      "ops:admin,read,start=ops-secret-token;viewer:read=viewer-secret-token";

  private static List<String> actions(JsonNode page) {
    List<String> out = new ArrayList<>();
    page.get("entries").forEach(e -> out.add(e.get("action").asText()));
    return out;
  }

  @Test
  void eachOperatorActionIsLoggedAndListedWithTheTokensName() {
    try (LogCapture log = LogCapture.of("pgworkflows.audit");
        TestServer server = TestServer.start(Map.of("WORKFLOWS_API_TOKENS", TOKENS))) {
      Api ops = server.api().withToken("ops-secret-token");
      assertThat(ops.put("/v1/queues/audited", Map.of("maxReceives", 3)).status()).isEqualTo(201);
      ops.post("/v1/queues/audited/messages", Map.of("body", 1));
      ops.post("/v1/queues/audited/messages", Map.of("body", 2));
      assertThat(ops.post("/v1/queues/audited/purge", null).json().get("purged").asInt())
          .isEqualTo(2);
      assertThat(ops.post("/v1/queues/audited/dead-letters/redrive", null).status()).isEqualTo(200);
      Api.Response sub =
          ops.post(
              "/v1/topics/audited.*/subscriptions", Map.of("type", "queue", "name", "audited"));
      long subId = sub.json().get("id").asLong();
      assertThat(ops.delete("/v1/topics/audited.*/subscriptions/" + subId).status()).isEqualTo(204);
      long run =
          ops.post("/v1/workflows/audited-wf/runs", Map.of("input", 1))
              .json()
              .get("runId")
              .asLong();
      assertThat(ops.delete("/v1/workflows/audited-wf/runs/" + run).status()).isEqualTo(200);
      assertThat(ops.delete("/v1/queues/audited").status()).isEqualTo(204);
      // Refused and failed attempts change nothing and leave no row.
      assertThat(server.api().withToken("viewer-secret-token").delete("/v1/queues/other").status())
          .isEqualTo(403);
      assertThat(ops.delete("/v1/queues/never-made").status()).isEqualTo(404);

      JsonNode page = ops.get("/v1/audit").json();
      assertThat(actions(page))
          .containsExactly(
              "queue.delete",
              "run.cancel",
              "subscription.delete",
              "subscription.create",
              "queue.redrive",
              "queue.purge",
              "queue.put",
              "tokens.configured");
      JsonNode cancel = page.get("entries").get(1);
      assertThat(cancel.get("actor").asText()).isEqualTo("ops");
      assertThat(cancel.get("target").asText()).isEqualTo("audited-wf/" + run);
      assertThat(cancel.get("details").get("cancelled").asBoolean()).isTrue();
      assertThat(cancel.get("requestId").asText()).isNotBlank();
      JsonNode purge = page.get("entries").get(5);
      assertThat(purge.get("target").asText()).isEqualTo("audited");
      assertThat(purge.at("/details/purged").asInt()).isEqualTo(2);
      JsonNode created = page.get("entries").get(3);
      assertThat(created.get("target").asText()).isEqualTo("audited.*");
      assertThat(created.at("/details/id").asLong()).isEqualTo(subId);
      JsonNode configured = page.get("entries").get(7);
      assertThat(configured.get("actor").asText()).isEqualTo("(configuration)");
      assertThat(configured.at("/details/presenceOnly").asBoolean()).isFalse();
      assertThat(configured.at("/details/tokens").toString())
          .isEqualTo(
              "[{\"name\":\"ops\",\"scopes\":[\"read\",\"start\",\"admin\"]},"
                  + "{\"name\":\"viewer\",\"scopes\":[\"read\"]}]");

      assertThat(actions(ops.get("/v1/audit?action=queue.purge").json()))
          .containsExactly("queue.purge");
      JsonNode first = ops.get("/v1/audit?limit=3").json();
      assertThat(actions(first)).hasSize(3);
      assertThat(
              actions(
                  ops.get("/v1/audit?limit=3&cursor=" + first.get("nextCursor").asText()).json()))
          .containsExactly("subscription.create", "queue.redrive", "queue.purge");
      assertThat(server.api().withToken("viewer-secret-token").get("/v1/audit").status())
          .isEqualTo(403);

      List<ILoggingEvent> lines = log.events();
      for (String action :
          List.of(
              "queue.put",
              "queue.purge",
              "queue.redrive",
              "subscription.create",
              "subscription.delete",
              "run.cancel",
              "queue.delete")) {
        assertThat(lines)
            .as(action)
            .anySatisfy(
                e -> {
                  assertThat(e.getLevel()).isEqualTo(Level.INFO);
                  assertThat(e.getFormattedMessage())
                      .startsWith("audit action=" + action + " actor=ops target=");
                  assertThat(LogCapture.value(e, "action")).isEqualTo(action);
                  assertThat(LogCapture.value(e, "actor")).isEqualTo("ops");
                  assertThat(LogCapture.value(e, "auditId")).isNotNull();
                });
      }
      assertThat(lines)
          .anySatisfy(
              e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getFormattedMessage())
                    .isEqualTo(
                        "audit action=request.refused actor=viewer"
                            + " target=\"DELETE /v1/queues/{queue}\" details={\"lacking\":\"admin\"}");
              });
      assertThat(lines)
          .allSatisfy(
              e ->
                  assertThat(e.getFormattedMessage() + e.getKeyValuePairs())
                      .doesNotContain("secret-token"));
    }
  }

  @Test
  void aChangeOfTokensOrScopesIsRecordedOnceWhenAServerStarts() {
    TestDatabase db = TestDatabase.fresh();
    Map<String, String> before = Map.of("WORKFLOWS_API_TOKENS", "ci:worker=ci-token;ops:admin=t1");
    Map<String, String> after =
        Map.of("WORKFLOWS_API_TOKENS", "ci:worker,start=ci-token;ops:admin=t2");
    TestServer.start(db, before).close();
    TestServer.start(db, before).close();
    TestServer.start(db, after).close();
    try (TestServer server = TestServer.start(db, after)) {
      JsonNode page = server.api().withToken("t2").get("/v1/audit?action=tokens.configured").json();
      assertThat(page.get("entries")).hasSize(2);
      assertThat(page.at("/entries/0/details/tokens/0/scopes").toString())
          .isEqualTo("[\"start\",\"worker\"]");
      assertThat(page.at("/entries/1/details/tokens/0/scopes").toString())
          .isEqualTo("[\"worker\"]");
      assertThat(page.toString()).doesNotContain("ci-token");
    }
  }

  @Test
  void withoutTokensTheActorIsPresenceOnly() {
    try (TestServer server = TestServer.start()) {
      Api api = server.api();
      api.put("/v1/queues/anyone", null);
      api.post("/v1/queues/anyone/purge", null);
      JsonNode entry = api.get("/v1/audit?action=queue.purge").json().at("/entries/0");
      assertThat(entry.get("actor").asText()).isEqualTo("(presence-only)");
    }
  }
}
