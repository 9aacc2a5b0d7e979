package dev.pgworkflows.workflows.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.pgworkflows.workflows.ApiException;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** JSON over HTTP to the server; problem+json answers become {@link ApiException}s. */
public final class Transport {
  public static final ObjectMapper JSON =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .addModule(new Jdk8Module())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  private final String base;
  private final String authorization;
  private final HttpClient client;

  public Transport(String url, String token) {
    this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    this.authorization = "Bearer " + (token == null || token.isBlank() ? "local" : token);
    // HTTP/1.1 with keep-alive: asking for HTTP/2 over cleartext makes the JDK client offer an
    // h2c upgrade on every request, which the server declines, and costs about 9x per call.
    // Responses are read into a byte array, so completing them on the selector thread is safe
    // and saves a thread hand-off per call.
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(Runnable::run)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  public JsonNode get(String path) {
    return send("GET", path, null, Duration.ofSeconds(30));
  }

  public JsonNode delete(String path) {
    return send("DELETE", path, null, Duration.ofSeconds(30));
  }

  public JsonNode post(String path, Object body) {
    return send("POST", path, body, Duration.ofSeconds(30));
  }

  /**
   * Sends one request. Throws {@link ApiException} for an error status and {@link
   * ServerUnavailableException} when the server cannot be reached or answers 502 to 504.
   */
  public JsonNode send(String method, String path, Object body, Duration timeout) {
    byte[] bytes;
    try {
      bytes = body == null ? new byte[0] : JSON.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("could not serialise the request: " + e.getMessage(), e);
    }
    HttpRequest.Builder req =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(timeout)
            .header("Authorization", authorization)
            .header("Accept", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
    if (body != null) {
      req.header("Content-Type", "application/json");
    }
    // W3C trace context of the current span (a step's), so server spans join the run's trace.
    W3CTraceContextPropagator.getInstance()
        .inject(io.opentelemetry.context.Context.current(), req, HttpRequest.Builder::header);
    HttpResponse<byte[]> resp;
    try {
      resp = client.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException e) {
      throw new ServerUnavailableException(
          "server "
              + base
              + " is unreachable: "
              + e.getClass().getSimpleName()
              + " "
              + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServerUnavailableException("interrupted while calling " + base, e);
    }
    int status = resp.statusCode();
    JsonNode json = parse(resp.body());
    if (status >= 200 && status < 300) {
      return json;
    }
    String detail =
        json != null && json.hasNonNull("detail") ? json.get("detail").asText() : "HTTP " + status;
    if (status == 502 || status == 503 || status == 504) {
      throw new ServerUnavailableException("server answered " + status + ": " + detail, null);
    }
    throw new ApiException(status, detail);
  }

  private static JsonNode parse(byte[] body) {
    if (body.length == 0) {
      return null;
    }
    try {
      return JSON.readTree(body);
    } catch (IOException e) {
      return null;
    }
  }
}
