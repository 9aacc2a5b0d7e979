package dev.pgworkflows.server;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.model.SimpleResponse;
import com.atlassian.oai.validator.report.ValidationReport;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks real requests and responses against openapi.yaml. Requests are checked when the server
 * accepted them (tests of bad input send invalid requests on purpose); responses always.
 */
final class SpecValidator {
  static final String SPEC = load();
  private static final OpenApiInteractionValidator VALIDATOR = build();

  private static OpenApiInteractionValidator build() {
    try {
      return OpenApiInteractionValidator.createForInlineApiSpecification(SPEC).build();
    } catch (OpenApiInteractionValidator.ApiLoadException e) {
      throw new IllegalStateException("openapi.yaml does not load: " + e.getParseMessages(), e);
    }
  }

  private SpecValidator() {}

  static void check(
      String method,
      String pathAndQuery,
      String requestBody,
      String requestContentType,
      Map<String, String> requestHeaders,
      int status,
      String responseBody,
      Map<String, List<String>> responseHeaders) {
    URI uri = URI.create(pathAndQuery);
    SimpleRequest.Builder req =
        new SimpleRequest.Builder(Request.Method.valueOf(method), uri.getRawPath());
    req.withAuthorization("Bearer x");
    requestHeaders.forEach(req::withHeader);
    if (requestBody != null && !requestBody.isEmpty()) {
      req.withBody(requestBody);
      req.withContentType(requestContentType == null ? "application/json" : requestContentType);
    }
    if (uri.getRawQuery() != null) {
      for (String kv : uri.getRawQuery().split("&")) {
        String[] p = kv.split("=", 2);
        req.withQueryParam(
            URLDecoder.decode(p[0], StandardCharsets.UTF_8),
            p.length > 1 ? URLDecoder.decode(p[1], StandardCharsets.UTF_8) : "");
      }
    }
    SimpleResponse.Builder resp = SimpleResponse.Builder.status(status);
    String contentType = header(responseHeaders, "Content-Type");
    if (contentType != null) {
      resp.withContentType(contentType);
    }
    if (responseBody != null && !responseBody.isEmpty()) {
      resp.withBody(responseBody);
    }
    ValidationReport report =
        status < 400
            ? VALIDATOR.validate(req.build(), resp.build())
            : VALIDATOR.validateResponse(
                uri.getRawPath(), Request.Method.valueOf(method), resp.build());
    List<ValidationReport.Message> errors =
        report.getMessages().stream()
            .filter(m -> m.getLevel() == ValidationReport.Level.ERROR)
            // A request for a route that does not exist has no spec to match; its 404 problem
            // document is still checked by the tests themselves.
            .filter(m -> !(status == 404 && m.getKey().equals("validation.request.path.missing")))
            // Jetty refuses oversized headers before routing: any route may answer 431.
            .filter(
                m -> !(status == 431 && m.getKey().equals("validation.response.status.unknown")))
            .toList();
    if (!errors.isEmpty()) {
      throw new AssertionError(
          method
              + " "
              + pathAndQuery
              + " -> "
              + status
              + " does not match openapi.yaml:\n"
              + errors.stream()
                  .map(m -> "  " + m.getKey() + ": " + m.getMessage())
                  .collect(Collectors.joining("\n"))
              + "\nresponse: "
              + (responseBody == null
                  ? ""
                  : responseBody.substring(0, Math.min(500, responseBody.length()))));
    }
  }

  private static String header(Map<String, List<String>> headers, String name) {
    return headers.entrySet().stream()
        .filter(e -> e.getKey().equalsIgnoreCase(name))
        .map(e -> e.getValue().get(0))
        .findFirst()
        .orElse(null);
  }

  private static String load() {
    try (InputStream in =
        SpecValidator.class.getResourceAsStream("/dev/pgworkflows/server/openapi.yaml")) {
      if (in == null) {
        throw new IllegalStateException("openapi.yaml is not on the class path");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
