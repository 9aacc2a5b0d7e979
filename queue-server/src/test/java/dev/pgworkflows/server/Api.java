package dev.pgworkflows.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/** A small HTTP client for tests: JSON in, {@link Response} out. */
public final class Api {
  public static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  private final Supplier<String> base;
  private final String token;

  public Api(String base, String token) {
    this(() -> base, token);
  }

  /**
   * A client whose server's address is looked up at each request: one made before its server
   * started (a static field beside the server's extension) works once it has.
   */
  public Api(Supplier<String> base, String token) {
    this.base = base;
    this.token = token;
  }

  /** A client with another token (null: no Authorization header). */
  public Api withToken(String other) {
    return new Api(base, other);
  }

  /** A response, its JSON parsed when it has any. */
  public record Response(
      int status, String body, JsonNode json, Map<String, java.util.List<String>> headers) {
    public String header(String name) {
      return headers.entrySet().stream()
          .filter(e -> e.getKey().equalsIgnoreCase(name))
          .map(e -> e.getValue().get(0))
          .findFirst()
          .orElse(null);
    }

    public boolean isProblem() {
      String ct = header("Content-Type");
      return ct != null && ct.startsWith("application/problem+json");
    }
  }

  public Response get(String path) {
    return send("GET", path, null, Map.of());
  }

  public Response delete(String path) {
    return send("DELETE", path, null, Map.of());
  }

  /** Until the server has {@code n} polls waiting (its own gauge); fails after 10 s. */
  public void awaitWaitingPolls(int n) {
    long deadline = System.currentTimeMillis() + 10_000;
    while (System.currentTimeMillis() < deadline) {
      String scrape = withToken(null).get("/metrics").body();
      for (String line : scrape.split("\n")) {
        if (line.startsWith("queue_waiting_polls ")
            && Double.parseDouble(line.substring(line.indexOf(' ') + 1)) >= n) {
          return;
        }
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new AssertionError("no poll came to wait");
  }

  public Response post(String path, Object body) {
    return send("POST", path, body, Map.of());
  }

  public Response put(String path, Object body) {
    return send("PUT", path, body, Map.of());
  }

  /** Sends {@code body}: a String is sent as is, anything else as JSON. */
  public Response send(String method, String path, Object body, Map<String, String> headers) {
    try {
      byte[] bytes =
          body == null
              ? new byte[0]
              : body instanceof String s
                  ? s.getBytes(java.nio.charset.StandardCharsets.UTF_8)
                  : body instanceof byte[] b ? b : JSON.writeValueAsBytes(body);
      HttpRequest.Builder req =
          HttpRequest.newBuilder(URI.create(base.get() + path))
              .timeout(Duration.ofSeconds(60))
              .method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
      if (body != null) {
        req.header("Content-Type", "application/json");
      }
      if (token != null) {
        req.header("Authorization", "Bearer " + token);
      }
      headers.forEach(req::header);
      HttpResponse<String> resp = CLIENT.send(req.build(), HttpResponse.BodyHandlers.ofString());
      SpecValidator.check(
          method,
          path,
          new String(bytes, java.nio.charset.StandardCharsets.UTF_8),
          headers.getOrDefault("Content-Type", "application/json"),
          headers,
          resp.statusCode(),
          resp.body(),
          resp.headers().map());
      JsonNode json = null;
      String ct = resp.headers().firstValue("Content-Type").orElse("");
      if (ct.contains("json") && !resp.body().isEmpty()) {
        json = JSON.readTree(resp.body());
      }
      return new Response(resp.statusCode(), resp.body(), json, resp.headers().map());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
