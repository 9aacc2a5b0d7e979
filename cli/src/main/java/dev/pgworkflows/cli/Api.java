package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/** The server's REST API over HTTP: one request per call, errors as exceptions. */
final class Api {
  /** Longer than the longest wait a request may ask for (a receive's 30 s long poll). */
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private final String base;
  private final String token;
  private final HttpClient http;

  Api(String base, String token) {
    this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
    this.token = token;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  /** A path from segments, each percent-encoded: {@code path("v1", "topics", "orders.#")}. */
  static String path(Object... segments) {
    StringBuilder p = new StringBuilder();
    for (Object s : segments) {
      p.append('/').append(URLEncoder.encode(String.valueOf(s), StandardCharsets.UTF_8));
    }
    return p.toString().replace("+", "%20");
  }

  /** A query string of the parameters that are not null, or "" when there are none. */
  static String query(Map<String, ?> params) {
    StringJoiner q = new StringJoiner("&", "?", "");
    q.setEmptyValue("");
    params.forEach(
        (k, v) -> {
          if (v != null) {
            q.add(
                URLEncoder.encode(k, StandardCharsets.UTF_8)
                    + "="
                    + URLEncoder.encode(String.valueOf(v), StandardCharsets.UTF_8));
          }
        });
    return q.toString();
  }

  static Map<String, Object> params() {
    return new LinkedHashMap<>();
  }

  Answer get(String path) {
    return send("GET", path, null, Map.of());
  }

  Answer post(String path, JsonNode body) {
    return send("POST", path, body, Map.of());
  }

  Answer put(String path, JsonNode body) {
    return send("PUT", path, body, Map.of());
  }

  Answer delete(String path) {
    return send("DELETE", path, null, Map.of());
  }

  /** Sends one request; a status of 400 or more is thrown as {@link ServerAnswered}. */
  Answer send(String method, String path, JsonNode body, Map<String, String> headers) {
    URI uri;
    try {
      uri = URI.create(base + path);
    } catch (IllegalArgumentException e) {
      throw new ServerUnreachable("not a server address: " + base, e);
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .timeout(REQUEST_TIMEOUT)
            .header("Accept", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(Json.compact(body)));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    if (token != null && !token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    headers.forEach(request::header);
    HttpResponse<String> response;
    try {
      response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException e) {
      throw new ServerUnreachable("cannot reach " + base + ": " + reason(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerUnreachable("interrupted waiting for " + base, e);
    }
    if (response.statusCode() >= 400) {
      throw ServerAnswered.from(response.statusCode(), response.body());
    }
    return Answer.of(response.statusCode(), response.body());
  }

  private static String reason(Exception e) {
    Throwable t = e;
    while (t.getCause() != null && (t.getMessage() == null || t.getMessage().isBlank())) {
      t = t.getCause();
    }
    String message = t.getMessage();
    return message == null || message.isBlank() ? t.getClass().getSimpleName() : message;
  }
}
