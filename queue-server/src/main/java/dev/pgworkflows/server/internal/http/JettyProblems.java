package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.Problem;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors Jetty answers before a request reaches the application (oversized headers, a malformed
 * request line) are problem+json too, not Jetty's HTML page.
 */
public final class JettyProblems extends ErrorHandler {
  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      String message,
      Throwable cause,
      Callback callback) {
    String detail =
        switch (code) {
          case 431 -> "the request's headers are too large";
          case 414 -> "the request URI is too long";
          case 400 -> "the request is malformed";
          // Jetty's own message may be an exception's text: the status's name says enough.
          default -> "the request could not be handled: " + HttpStatus.getMessage(code);
        };
    String body =
        Json.write(new Problem("about:blank", Problems.title(code), code, detail, null, null));
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/problem+json");
    response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
  }
}
