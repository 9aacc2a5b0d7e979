package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.server.ApiToken;
import dev.pgworkflows.server.Scope;
import dev.pgworkflows.server.internal.audit.AuditTrail;
import io.javalin.http.Context;
import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * Authentication and authorisation of every request: the bearer token is looked up by its SHA-256
 * digest, compared with every configured digest by {@link MessageDigest#isEqual} (no early exit, so
 * the time taken says nothing about which token or how much of one matched), and the token must
 * hold the scope the route needs ({@link RouteScopes}). With no tokens configured the server only
 * requires that a bearer token be present, and grants every scope: that is allowed on loopback, or
 * with {@code WORKFLOWS_INSECURE_NO_AUTH} (see ServerConfig).
 */
public final class Auth {
  /** Who made the request: a token's name and scopes. */
  public record Caller(String name, Set<Scope> scopes) {}

  private static final String CALLER = "caller";
  private static final Caller PRESENCE_ONLY =
      new Caller(AuditTrail.PRESENCE_ONLY, EnumSet.allOf(Scope.class));

  private final List<ApiToken> tokens;
  private final List<byte[]> digests;
  private final List<Caller> callers;

  public Auth(List<ApiToken> tokens) {
    this.tokens = List.copyOf(tokens);
    this.digests = tokens.stream().map(t -> HexFormat.of().parseHex(t.sha256())).toList();
    this.callers = tokens.stream().map(t -> new Caller(t.name(), t.scopes())).toList();
  }

  public boolean presenceOnly() {
    return tokens.isEmpty();
  }

  /** The caller of a request that passed {@link #check}; null for open routes. */
  public static Caller caller(Context ctx) {
    return ctx.attribute(CALLER);
  }

  /**
   * Refuses the request (401, or 403 naming the scope it lacks) unless its route is open or its
   * token may use it. {@code template} is the route's, null for a path without a route (which still
   * needs a valid token, so unknown paths say nothing to strangers).
   */
  public void check(Context ctx, String template) {
    String method = ctx.method().name();
    if (template != null && RouteScopes.open(method, template)) {
      return;
    }
    Caller caller = authenticate(ctx);
    ctx.attribute(CALLER, caller);
    if (template == null) {
      return;
    }
    String route = RouteScopes.key(method, template);
    Scope needed =
        RouteScopes.of(method, template)
            .orElseThrow(
                () -> new ApiException(403, route + " has no scope, so no token may use it"));
    if (!caller.scopes().contains(needed)) {
      AuditTrail.refused(caller.name(), route, needed);
      ctx.header(
          "WWW-Authenticate",
          "Bearer realm=\"pgworkflows\", error=\"insufficient_scope\", scope=\""
              + needed.wire()
              + "\"");
      throw new ApiException(
          403,
          "token \""
              + caller.name()
              + "\" lacks scope \""
              + needed.wire()
              + "\", which "
              + route
              + " needs");
    }
  }

  private Caller authenticate(Context ctx) {
    String header = ctx.header("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      throw unauthorized(ctx, "an Authorization: Bearer <token> header is required");
    }
    String token = header.substring(7).strip();
    if (token.isEmpty()) {
      throw unauthorized(ctx, "the bearer token is empty");
    }
    if (presenceOnly()) {
      return PRESENCE_ONLY;
    }
    byte[] given = ApiToken.digest(token);
    Caller found = null;
    for (int i = 0; i < digests.size(); i++) {
      if (MessageDigest.isEqual(digests.get(i), given)) {
        found = callers.get(i);
      }
    }
    if (found == null) {
      throw unauthorized(ctx, "the bearer token is not accepted");
    }
    return found;
  }

  private static ApiException unauthorized(Context ctx, String message) {
    ctx.header("WWW-Authenticate", "Bearer realm=\"pgworkflows\"");
    return new ApiException(401, message);
  }
}
