package dev.pgworkflows.server.internal.http;

import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Set;

/**
 * Bearer-token check. Tokens are compared as SHA-256 digests with {@link MessageDigest#isEqual}, so
 * the time taken says nothing about how much of a token matched. With no tokens configured the
 * server only requires that the header be present (the operator's proxy is the perimeter).
 */
public final class Auth {
  private static final Set<String> OPEN =
      Set.of("/healthz", "/readyz", "/metrics", "/openapi.yaml");

  private final List<byte[]> digests;

  public Auth(List<String> tokens) {
    this.digests = tokens.stream().map(Auth::digest).toList();
  }

  public boolean presenceOnly() {
    return digests.isEmpty();
  }

  public void check(Context ctx) {
    if (OPEN.contains(ctx.path())) {
      return;
    }
    String header = ctx.header("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      reject(ctx, "an Authorization: Bearer <token> header is required");
    }
    String token = header.substring(7).strip();
    if (token.isEmpty()) {
      reject(ctx, "the bearer token is empty");
    }
    if (presenceOnly()) {
      return;
    }
    byte[] given = digest(token);
    boolean ok = false;
    for (byte[] d : digests) {
      ok |= MessageDigest.isEqual(d, given);
    }
    if (!ok) {
      reject(ctx, "the bearer token is not accepted");
    }
  }

  private static void reject(Context ctx, String message) {
    ctx.header("WWW-Authenticate", "Bearer realm=\"pgworkflows\"");
    throw new ApiException(401, message);
  }

  private static byte[] digest(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
