package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The dashboard: {@code GET /ui} answers its page, {@code GET /ui/{asset}} its scripts and styles,
 * all from the class path's {@code ui/} folder and without a token (the page holds no data; its
 * calls to the API carry the bearer token the user signs in with). Each answer carries an ETag and
 * {@code Cache-Control: no-cache}, so a browser revalidates and an upgraded server's files are
 * taken at once, and a Content-Security-Policy that lets the page run only its own scripts and
 * styles and talk only to this server.
 */
public final class UiRoutes {
  /** Asset names: one path segment, letters, digits and dashes, and a known extension. */
  private static final Pattern NAME = Pattern.compile("[a-z0-9-]{1,64}\\.(html|js|css|svg)");

  private static final Map<String, String> TYPES =
      Map.of(
          "html", "text/html; charset=utf-8",
          "js", "text/javascript; charset=utf-8",
          "css", "text/css; charset=utf-8",
          "svg", "image/svg+xml");

  private static final String POLICY =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
          + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  /** A file as served: its bytes, content type and entity tag. */
  private record Asset(byte[] bytes, String type, String etag) {}

  /** Files read once; an absent one is not cached, so it costs a class path lookup per request. */
  private final Map<String, Asset> assets = new ConcurrentHashMap<>();

  public void register(RoutesConfig routes) {
    routes.get("/ui", ctx -> serve(ctx, "index.html"));
    routes.get("/ui/{asset}", ctx -> serve(ctx, ctx.pathParam("asset")));
  }

  private void serve(Context ctx, String name) {
    if (!NAME.matcher(name).matches()) {
      throw ApiException.notFound("the dashboard has no file " + name);
    }
    Asset asset =
        Optional.ofNullable(assets.get(name))
            .or(() -> load(name).map(a -> assets.computeIfAbsent(name, n -> a)))
            .orElseThrow(() -> ApiException.notFound("the dashboard has no file " + name));
    ctx.header("Cache-Control", "no-cache");
    ctx.header("ETag", asset.etag());
    ctx.header("X-Content-Type-Options", "nosniff");
    ctx.header("Referrer-Policy", "no-referrer");
    ctx.header("Content-Security-Policy", POLICY);
    if (asset.etag().equals(ctx.header("If-None-Match"))) {
      ctx.status(304);
      return;
    }
    ctx.contentType(asset.type()).result(asset.bytes());
  }

  private static Optional<Asset> load(String name) {
    try (InputStream in = UiRoutes.class.getResourceAsStream("/ui/" + name)) {
      if (in == null) {
        return Optional.empty();
      }
      byte[] bytes = in.readAllBytes();
      String extension = name.substring(name.lastIndexOf('.') + 1);
      return Optional.of(new Asset(bytes, TYPES.get(extension), etag(bytes)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String etag(byte[] bytes) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
      return "\"" + HexFormat.of().formatHex(digest, 0, 16) + "\"";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
