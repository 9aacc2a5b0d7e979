package dev.pgworkflows.workflows.internal.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.pgworkflows.protocol.Problem;
import dev.pgworkflows.workflows.ApiException;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/** JSON over HTTP to the server; problem+json answers become {@link ApiException}s. */
public final class Transport {
  public static final ObjectMapper JSON =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .addModule(new Jdk8Module())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  /**
   * Writes request bodies: the protocol's records, with absent fields left out (the spec's request
   * schemas do not take nulls). JSON values inside them (inputs, outputs) are trees already, made
   * by {@link #JSON}, and are written as they are, nulls and all.
   */
  private static final ObjectMapper WIRE =
      JSON.copy().setDefaultPropertyInclusion(JsonInclude.Include.NON_NULL);

  /** Paths whose URLs are kept; past this many the kept ones are dropped and kept afresh. */
  private static final int URLS_KEPT = 64;

  private final String base;
  private final String authorization;
  private final Proxy proxy;
  private final Map<String, URL> urls = new ConcurrentHashMap<>();

  /** Headers every request carries besides the token (a worker's identity). */
  private final Map<String, String> headers;

  public Transport(String url, String token) {
    this(url, token, Map.of());
  }

  /** A transport whose every request carries these headers too. */
  public Transport(String url, String token, Map<String, String> headers) {
    this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    this.authorization = "Bearer " + (token == null || token.isBlank() ? "local" : token);
    this.proxy = proxyFor(URI.create(base));
    this.headers = Map.copyOf(headers);
  }

  /**
   * The proxy the default selector chooses for the server, chosen once rather than for every
   * request (the selector reads system properties on each call).
   */
  private static Proxy proxyFor(URI server) {
    ProxySelector selector = ProxySelector.getDefault();
    if (selector == null) {
      return Proxy.NO_PROXY;
    }
    List<Proxy> proxies = selector.select(server);
    return proxies == null || proxies.isEmpty() ? Proxy.NO_PROXY : proxies.get(0);
  }

  /** The URL of a path on the server, parsed once for the paths a worker repeats. */
  private URL url(String path) throws IOException {
    URL u = urls.get(path);
    if (u == null) {
      u = URI.create(base + path).toURL();
      if (urls.size() >= URLS_KEPT) {
        urls.clear(); // paths naming runs pass through; the repeated ones come back at once
      }
      urls.put(path, u);
    }
    return u;
  }

  public JsonNode get(String path) {
    return send("GET", path, null, Duration.ofSeconds(30));
  }

  /** GETs {@code path} and reads the answer as {@code answer}. */
  public <T> T get(String path, Class<T> answer) {
    return read(get(path), answer);
  }

  /** PUTs {@code body} and reads the answer as {@code answer}. */
  public <T> T put(String path, Object body, Class<T> answer) {
    return read(send("PUT", path, body, Duration.ofSeconds(30)), answer);
  }

  /** DELETEs {@code path} and reads the answer as {@code answer}. */
  public <T> T delete(String path, Class<T> answer) {
    return read(delete(path), answer);
  }

  /** POSTs {@code body} and reads the answer as {@code answer}. */
  public <T> T post(String path, Object body, Class<T> answer) {
    return read(post(path, body), answer);
  }

  /**
   * As {@link #post(String, Object, Class)}, with one more header when {@code value} is not null.
   */
  public <T> T post(String path, Object body, String header, String value, Class<T> answer) {
    return read(post(path, body, header, value), answer);
  }

  /** As {@link #post(String, Object, String, String, Class)}, waiting up to {@code timeout}. */
  public <T> T post(
      String path, Object body, String header, String value, Duration timeout, Class<T> answer) {
    return read(exchange("POST", path, body, timeout, header, value, null), answer);
  }

  /** A part of an answer as one of the protocol's records. */
  public static <T> T read(JsonNode json, Class<T> type) {
    try {
      return JSON.treeToValue(json, type);
    } catch (JsonProcessingException | IllegalArgumentException e) {
      throw new ServerUnavailableException(
          "the server's answer does not read as " + type.getSimpleName() + ": " + e.getMessage(),
          e);
    }
  }

  public JsonNode delete(String path) {
    return send("DELETE", path, null, Duration.ofSeconds(30));
  }

  public JsonNode post(String path, Object body) {
    return send("POST", path, body, Duration.ofSeconds(30));
  }

  /** As {@link #post(String, Object)}, with one more header when {@code value} is not null. */
  public JsonNode post(String path, Object body, String header, String value) {
    return exchange("POST", path, body, Duration.ofSeconds(30), header, value, null);
  }

  /**
   * Posts and reads the answer as newline-delimited JSON, handing each line to {@code lines} as it
   * arrives, until the server ends it; blank lines only show that the stream is alive. Throws as
   * {@link #send} does when no line comes for {@code silence}, and {@link StreamHeldException} when
   * the first line does not.
   */
  public void stream(String path, Object body, Duration silence, Consumer<JsonNode> lines) {
    exchange("POST", path, body, silence, null, null, lines);
  }

  /**
   * Opens a GET of Server-Sent Events and returns the open connection, its answer a success: the
   * caller reads its body and disconnects it (from any thread, which ends a read in progress).
   * {@code lastEventId} (when not null) goes as {@code Last-Event-ID}; a read waits at most {@code
   * silence}. Throws as {@link #send} does for an error status or an unreachable server.
   */
  public HttpURLConnection events(String path, String lastEventId, Duration silence) {
    HttpURLConnection c = null;
    try {
      c = (HttpURLConnection) url(path).openConnection(proxy);
      c.setConnectTimeout(5_000);
      c.setReadTimeout((int) Math.min(Integer.MAX_VALUE, silence.toMillis()));
      c.setUseCaches(false);
      c.setRequestMethod("GET");
      c.setRequestProperty("Authorization", authorization);
      headers.forEach(c::setRequestProperty);
      c.setRequestProperty("Accept", "text/event-stream");
      if (lastEventId != null) {
        c.setRequestProperty("Last-Event-ID", lastEventId);
      }
      int status = c.getResponseCode();
      if (status >= 200 && status < 300) {
        return c;
      }
      byte[] answer;
      try (InputStream in = c.getErrorStream()) {
        answer = in == null ? new byte[0] : in.readAllBytes();
      }
      JsonNode json = parse(answer);
      Problem problem = json != null && json.isObject() ? problem(json) : null;
      String detail =
          problem != null && problem.detail() != null ? problem.detail() : "HTTP " + status;
      if (status == 502 || status == 503 || status == 504) {
        throw new ServerUnavailableException("server answered " + status + ": " + detail, null);
      }
      throw new ApiException(status, detail);
    } catch (IOException e) {
      if (c != null) {
        c.disconnect();
      }
      throw unreachable(e);
    }
  }

  /**
   * Sends one request. Throws {@link ApiException} for an error status and {@link
   * ServerUnavailableException} when the server cannot be reached or answers 502 to 504.
   *
   * <p>Blocking {@code HttpURLConnection} with the JDK's keep-alive cache: per call it costs less
   * than half the CPU of {@code java.net.http.HttpClient}, whose asynchronous machinery dominates
   * small request/response exchanges. The body is buffered, not streamed: the JDK then writes it
   * right behind the headers (two writes, back to back, on a socket with TCP_NODELAY), so the
   * server finds the request whole when it reads. Streamed, the headers left first and the body
   * after them, and a small POST took three times as long. The cache keeps {@code
   * http.maxConnections} (JDK default 5) idle connections per server; processes with many
   * concurrent callers may raise it.
   */
  public JsonNode send(String method, String path, Object body, Duration timeout) {
    return exchange(method, path, body, timeout, null, null, null);
  }

  private JsonNode exchange(
      String method,
      String path,
      Object body,
      Duration timeout,
      String header,
      String value,
      Consumer<JsonNode> lines) {
    byte[] bytes;
    try {
      bytes = body == null ? null : WIRE.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("could not serialise the request: " + e.getMessage(), e);
    }
    int status;
    byte[] answer;
    HttpURLConnection c = null;
    boolean[] started = {false};
    try {
      c = (HttpURLConnection) url(path).openConnection(proxy);
      c.setConnectTimeout(5_000);
      c.setReadTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
      c.setUseCaches(false);
      c.setRequestMethod(method);
      c.setRequestProperty("Authorization", authorization);
      headers.forEach(c::setRequestProperty);
      c.setRequestProperty("Accept", lines != null ? "application/x-ndjson" : "application/json");
      if (value != null) {
        c.setRequestProperty(header, value);
      }
      // W3C trace context of the current span (a step's), so server spans join the run's trace.
      W3CTraceContextPropagator.getInstance()
          .inject(
              io.opentelemetry.context.Context.current(), c, HttpURLConnection::setRequestProperty);
      if (bytes != null) {
        c.setDoOutput(true);
        c.setRequestProperty("Content-Type", "application/json");
        try (OutputStream out = c.getOutputStream()) {
          out.write(bytes);
        }
      }
      status = c.getResponseCode();
      if (lines != null && status >= 200 && status < 300) {
        readLines(
            c.getInputStream(),
            line -> {
              started[0] = true;
              lines.accept(line);
            });
        return null;
      }
      // Read to the end and close, so the connection goes back to the keep-alive cache. With
      // its length known the answer is read into one array of that size, not through chunks of
      // 8 KiB or more (by JDK) copied into a third.
      int length = c.getContentLength();
      try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
        answer = in == null ? new byte[0] : length >= 0 ? in.readNBytes(length) : in.readAllBytes();
      }
    } catch (IOException e) {
      if (c != null) {
        c.disconnect();
      }
      if (lines != null && !started[0] && e instanceof SocketTimeoutException) {
        throw new StreamHeldException(
            "the stream from " + base + path + " sent nothing for " + timeout.toMillis() + " ms",
            e);
      }
      throw unreachable(e);
    }
    JsonNode json = parse(answer);
    if (status >= 200 && status < 300) {
      return json;
    }
    Problem problem = json != null && json.isObject() ? problem(json) : null;
    String detail =
        problem != null && problem.detail() != null ? problem.detail() : "HTTP " + status;
    if (status == 502 || status == 503 || status == 504) {
      throw new ServerUnavailableException("server answered " + status + ": " + detail, null);
    }
    throw new ApiException(status, detail);
  }

  /** An error answer as the problem document it should be; null when it is not one. */
  private static Problem problem(JsonNode json) {
    try {
      return JSON.treeToValue(json, Problem.class);
    } catch (JsonProcessingException | IllegalArgumentException e) {
      return null;
    }
  }

  private static void readLines(InputStream body, Consumer<JsonNode> lines) throws IOException {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        if (!line.isBlank()) {
          lines.accept(JSON.readTree(line));
        }
      }
    }
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

  private ServerUnavailableException unreachable(IOException e) {
    return new ServerUnavailableException(
        "server "
            + base
            + " is unreachable: "
            + e.getClass().getSimpleName()
            + " "
            + e.getMessage(),
        e);
  }
}
