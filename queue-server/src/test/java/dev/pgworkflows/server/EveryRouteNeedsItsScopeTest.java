package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every operation of openapi.yaml names the scope it needs ({@code x-scope}) or is open, and the
 * server holds to it: over HTTP, a token of each scope gets past authorisation exactly where its
 * scope is named (any answer but 401 and 403), and elsewhere a 403 problem naming the scope it
 * lacks. The table comes from the spec, so a new operation without a scope fails here, and one the
 * server serves without a scope stops the server from starting at all.
 */
class EveryRouteNeedsItsScopeTest {
  private static final Set<String> SCOPES = Set.of("read", "start", "worker", "admin");

  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with(
          "WORKFLOWS_API_TOKENS",
          "reader:read=token-read;starter:start=token-start;"
              + "worker:worker=token-worker;operator:admin=token-admin");

  /** An operation of the spec, with the scope it names (null for an open one). */
  record Operation(String method, String path, String scope) {
    /** The path with a value for each parameter: none of them exists, nothing is changed. */
    String concretePath() {
      return path.replace("{queue}", "scoped")
          .replace("{name}", "scoped-wf")
          .replace("{runId}", "1")
          .replace("{step}", "scoped-step")
          .replace("{id}", "1")
          .replace("{streamId}", "no-such-stream")
          .replace("{stream}", "scoped-stream")
          .replace("{event}", "scoped-event")
          .replace("{pattern}", "scoped.*")
          .replace("{topic}", "scoped.topic")
          .replace("{key}", "scoped-key")
          .replace("{attribute}", "scopedAttribute")
          .replace("{batchId}", "1")
          .replace("{group}", "scoped-group")
          .replace("{callback}", "scoped-callback")
          .replace("{update}", "scoped-update")
          .replace("{updateId}", "1")
          .replace("{token}", "1.1.scoped")
          .replace("{asset}", "app.js");
    }

    /** A body no route takes (a JSON array where objects go), so an allowed call stops at 400. */
    Object body() {
      return method.equals("GET") || method.equals("DELETE") ? null : "[]";
    }

    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  static List<Operation> operations() throws Exception {
    JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(SpecValidator.SPEC);
    List<Operation> ops = new ArrayList<>();
    for (Map.Entry<String, JsonNode> p : spec.get("paths").properties()) {
      for (Map.Entry<String, JsonNode> op : p.getValue().properties()) {
        if (List.of("get", "put", "post", "delete", "patch").contains(op.getKey())) {
          JsonNode security = op.getValue().get("security");
          boolean open = security != null && security.isArray() && security.isEmpty();
          JsonNode scope = op.getValue().get("x-scope");
          String method = op.getKey().toUpperCase(Locale.ROOT);
          assertThat(open || scope != null)
              .as("%s %s has no x-scope (and is not open: security: [])", method, p.getKey())
              .isTrue();
          if (scope != null) {
            assertThat(SCOPES).as("x-scope of %s %s", method, p.getKey()).contains(scope.asText());
          }
          ops.add(new Operation(method, p.getKey(), open ? null : scope.asText()));
        }
      }
    }
    return ops;
  }

  @Test
  void eachScopesTokenPassesWhereItsScopeIsNamedAndGets403NamingTheScopeElsewhere()
      throws Exception {
    List<Operation> ops = operations();
    assertThat(ops.stream().filter(o -> o.scope() != null).map(Operation::scope))
        .containsAll(SCOPES);
    List<String> wrong = new ArrayList<>();
    for (Operation op : ops) {
      if (op.scope() == null) {
        continue;
      }
      for (String scope : SCOPES) {
        Api.Response r =
            server
                .api()
                .withToken("token-" + scope)
                .send(op.method(), op.concretePath(), op.body(), Map.of());
        if (scope.equals(op.scope())) {
          if (r.status() == 401 || r.status() == 403 || r.status() >= 500) {
            wrong.add(op + " with scope " + scope + ": " + r.status() + " " + r.body());
          }
        } else if (r.status() != 403
            || !r.isProblem()
            || !r.json().get("detail").asText().contains("scope \"" + op.scope() + "\"")
            || !r.header("WWW-Authenticate").contains("scope=\"" + op.scope() + "\"")) {
          wrong.add(op + " with scope " + scope + ": " + r.status() + " " + r.body());
        }
      }
    }
    assertThat(wrong).as("answers that break the scope table").isEmpty();
  }

  @Test
  void everyScopedOperationWantsATokenAndTheOpenOnesWantNone() throws Exception {
    for (Operation op : operations()) {
      Api.Response r =
          server.api().withToken(null).send(op.method(), op.concretePath(), op.body(), Map.of());
      if (op.scope() == null && op.path().startsWith("/v1/callbacks/")) {
        // A callback's token is its credential: a made-up one is not found, not unauthorized.
        assertThat(r.status()).as(op.toString()).isEqualTo(404);
      } else if (op.scope() == null) {
        assertThat(r.status()).as(op.toString()).isEqualTo(200);
      } else {
        assertThat(r.status()).as(op.toString()).isEqualTo(401);
      }
    }
  }

  @Test
  void theRefusalNamesTheTokenAndTheScopeAndChangesNothing() {
    Api admin = server.api().withToken("token-admin");
    assertThat(admin.put("/v1/queues/kept", null).status()).isEqualTo(201);
    assertThat(
            server
                .api()
                .withToken("token-start")
                .post("/v1/queues/kept/messages", Map.of("body", 1))
                .status())
        .isEqualTo(201);

    Api.Response refused =
        server.api().withToken("token-worker").post("/v1/queues/kept/purge", null);

    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().get("detail").asText())
        .isEqualTo(
            "token \"worker\" lacks scope \"admin\", which POST /v1/queues/{queue}/purge needs");
    assertThat(
            server
                .api()
                .withToken("token-read")
                .get("/v1/queues/kept")
                .json()
                .at("/metrics/depth")
                .asLong())
        .isEqualTo(1);
  }
}
