package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import dev.pgworkflows.server.internal.json.Json;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.stream.Collectors;

/** Request bodies read into records (every failure a 400 naming the field) and JSON answers. */
public final class JsonBodies {
  private JsonBodies() {}

  /** Parses the request body into {@code type}; every failure is a 400 naming the field. */
  public static <T> T read(Context ctx, Class<T> type) {
    byte[] raw = ctx.bodyAsBytes();
    if (raw.length == 0) {
      throw ApiException.badRequest(null, "the request needs a JSON body");
    }
    try {
      T value = Json.MAPPER.readValue(raw, type);
      if (value == null) {
        throw ApiException.badRequest(null, "the request body must be a JSON object, not null");
      }
      return value;
    } catch (UnrecognizedPropertyException e) {
      throw ApiException.badRequest(path(e), "unknown field \"" + e.getPropertyName() + "\"");
    } catch (JsonMappingException e) {
      throw ApiException.badRequest(path(e), "invalid value: " + e.getOriginalMessage());
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest(null, "malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiException.badRequest(null, "could not read the request body");
    }
  }

  /** Writes {@code value} as the JSON response with the given status. */
  public static void respond(Context ctx, int status, Object value) {
    try {
      ctx.status(status)
          .contentType("application/json")
          .result(Json.MAPPER.writeValueAsBytes(value));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("response could not be serialised", e);
    }
  }

  private static String path(JsonMappingException e) {
    String p =
        e.getPath().stream()
            .map(
                r ->
                    r.getFieldName() != null
                        ? r.getFieldName()
                        : r.getIndex() >= 0 ? "[" + r.getIndex() + "]" : "?")
            .collect(Collectors.joining("."));
    return p.isEmpty() ? null : p.replace(".[", "[");
  }
}
