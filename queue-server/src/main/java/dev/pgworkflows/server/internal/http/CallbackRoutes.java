package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.runtime.CallbackCalls;
import dev.pgworkflows.engine.internal.store.CallbackStore;
import dev.pgworkflows.protocol.CallbackMinted;
import dev.pgworkflows.protocol.CallbackRequest;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Callback URLs: a worker mints a run's callback ({@code POST
 * /v1/workflows/{name}/runs/{runId}/callbacks/{callback}}), and anyone with its URL completes it
 * with a plain POST of JSON, no API token ({@code POST /v1/callbacks/{token}}, or {@code
 * .../reject} to fail it). The token is the only credential; each is taken at most {@value
 * #PER_MINUTE} times a minute by this server, and a body of at most {@value #MAX_BODY} bytes.
 */
public final class CallbackRoutes {
  static final int MAX_BODY = 64 * 1024;
  static final int PER_MINUTE = 10;

  private final CallbackCalls calls;
  private final Map<String, long[]> tries = new ConcurrentHashMap<>();

  public CallbackRoutes(CallbackCalls calls) {
    this.calls = calls;
  }

  public void register(RoutesConfig routes) {
    routes.post("/v1/workflows/{name}/runs/{runId}/callbacks/{callback}", this::create);
    routes.get("/v1/workflows/{name}/runs/{runId}/callbacks", this::list);
    routes.post("/v1/callbacks/{token}", ctx -> resolve(ctx, true));
    routes.post("/v1/callbacks/{token}/reject", ctx -> resolve(ctx, false));
    routes.post("/v1/callback-keys", this::rotate);
  }

  private void create(Context ctx) {
    String name = Params.workflow(ctx);
    long runId = Params.runId(ctx);
    CallbackRequest req = JsonBodies.read(ctx, CallbackRequest.class);
    CallbackStore.Minted m = calls.create(name, runId, ctx.pathParam("callback"), req.timeoutMs());
    JsonBodies.respond(
        ctx,
        m.created() ? 201 : 200,
        new CallbackMinted(
            m.token(),
            ctx.scheme() + "://" + ctx.host() + "/v1/callbacks/" + m.token(),
            m.expiresAt().toString(),
            m.created()));
  }

  private void list(Context ctx) {
    JsonBodies.respond(
        ctx, 200, Map.of("callbacks", calls.list(Params.workflow(ctx), Params.runId(ctx))));
  }

  private void resolve(Context ctx, boolean ok) {
    String token = ctx.pathParam("token");
    admit(token);
    byte[] raw = ctx.bodyAsBytes();
    if (raw.length > MAX_BODY) {
      throw new ApiException(413, "a callback's body may have at most " + MAX_BODY + " bytes");
    }
    JsonNode body = raw.length == 0 ? null : JsonBodies.read(ctx, JsonNode.class);
    CallbackStore.Resolved r = calls.resolve(token, ok, body == null ? "null" : Json.write(body));
    JsonBodies.respond(
        ctx, 200, Map.of("outcome", r.outcome(), "workflow", r.workflow(), "runId", r.runId()));
  }

  private void rotate(Context ctx) {
    if (ctx.bodyAsBytes().length > 0) {
      throw ApiException.badRequest("body", "a key rotation takes no body");
    }
    JsonBodies.respond(ctx, 201, Map.of("keyId", calls.rotateKey()));
  }

  /**
   * Counts a try of {@code token} in its minute; past {@value #PER_MINUTE}, a 429 until the minute
   * ends. Minutes that ended are forgotten as new ones begin.
   */
  private void admit(String token) {
    long minute = Instant.now().getEpochSecond() / 60;
    if (tries.size() > 10_000) {
      tries.values().removeIf(t -> t[0] != minute);
    }
    long[] t =
        tries.compute(
            token,
            (k, v) ->
                v == null || v[0] != minute
                    ? new long[] {minute, 1}
                    : new long[] {minute, v[1] + 1});
    if (t[1] > PER_MINUTE) {
      throw new ApiException(
          429, "this callback was tried more than " + PER_MINUTE + " times this minute");
    }
  }
}
