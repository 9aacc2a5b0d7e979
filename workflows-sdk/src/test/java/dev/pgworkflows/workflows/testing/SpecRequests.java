package dev.pgworkflows.workflows.testing;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.report.ValidationReport;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Checks requests the SDK made against openapi.yaml (the copy the server serves, on the class
 * path), as the server's tests check its answers.
 */
public final class SpecRequests {
  private static final OpenApiInteractionValidator VALIDATOR = build();

  private SpecRequests() {}

  private static OpenApiInteractionValidator build() {
    try (InputStream in =
        SpecRequests.class.getResourceAsStream("/dev/pgworkflows/server/openapi.yaml")) {
      if (in == null) {
        throw new IllegalStateException("openapi.yaml is not on the class path");
      }
      return OpenApiInteractionValidator.createForInlineApiSpecification(
              new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The spec's complaints about {@code request}; empty when it conforms. */
  public static List<String> violations(RecordingProxy.Recorded request) {
    String target = request.target();
    int q = target.indexOf('?');
    SimpleRequest.Builder b =
        new SimpleRequest.Builder(Request.Method.valueOf(request.method()), request.path());
    request.headers().forEach(b::withHeader);
    if (!request.body().isEmpty()) {
      b.withBody(request.body());
    }
    if (q >= 0) {
      for (String kv : target.substring(q + 1).split("&")) {
        String[] p = kv.split("=", 2);
        b.withQueryParam(
            URLDecoder.decode(p[0], StandardCharsets.UTF_8),
            p.length > 1 ? URLDecoder.decode(p[1], StandardCharsets.UTF_8) : "");
      }
    }
    ValidationReport report = VALIDATOR.validateRequest(b.build());
    return report.getMessages().stream()
        .filter(m -> m.getLevel() == ValidationReport.Level.ERROR)
        // The SDK sends "Accept: application/json" also to the routes that answer 204 (and a
        // problem+json when they refuse); the server does not negotiate. The bodies, paths,
        // parameters and headers the SDK sends are what is checked.
        .filter(m -> !m.getKey().equals("validation.request.accept.notAllowed"))
        .map(m -> m.getKey() + ": " + m.getMessage())
        .collect(Collectors.toList());
  }

  /** The route a request went to, in the spec's terms: {@code POST /v1/workflows/{name}/runs}. */
  public static String route(RecordingProxy.Recorded request) {
    String path =
        request
            .path()
            .replaceFirst("^/v1/workflows/[^/]+", "/v1/workflows/{name}")
            .replaceFirst("^/v1/schedules/[^/]+", "/v1/schedules/{name}")
            .replaceFirst("^/v1/rate-limits/[^/]+", "/v1/rate-limits/{key}")
            .replaceFirst("/runs/[0-9]+", "/runs/{runId}")
            .replaceFirst("/signals/[^/]+$", "/signals/{event}")
            .replaceFirst("/concurrency/[^/]+$", "/concurrency/{key}")
            .replaceFirst("/tasks/stream/[^/]+", "/tasks/stream/{streamId}");
    return request.method() + " " + path;
  }
}
