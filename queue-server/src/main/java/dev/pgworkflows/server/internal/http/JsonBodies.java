package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import io.javalin.http.Context;
import java.io.IOException;

/** Request bodies read into records (every failure a 400 naming the field) and JSON answers. */
public final class JsonBodies {
  private JsonBodies() {}

  /** Parses the request body into {@code type}; every failure is a 400 naming the field. */
  public static <T> T read(Context ctx, Class<T> type) {
    return read(body(ctx), type);
  }

  /** The request body's bytes; a 400 when there are none. */
  static byte[] body(Context ctx) {
    byte[] raw = ctx.bodyAsBytes();
    if (raw.length == 0) {
      throw ApiException.badRequest(null, "the request needs a JSON body");
    }
    return raw;
  }

  /** Parses {@code raw} into {@code type}; every failure is a 400 naming the field. */
  static <T> T read(byte[] raw, Class<T> type) {
    try {
      return notNull(Json.MAPPER.readValue(raw, type));
    } catch (JsonProcessingException e) {
      throw JsonErrors.of(e, null);
    } catch (IOException e) {
      throw ApiException.badRequest(null, "could not read the request body");
    }
  }

  /** Parses {@code raw} as a JSON tree: only its syntax and the parser's limits are checked. */
  static JsonNode tree(byte[] raw) {
    return read(raw, JsonNode.class);
  }

  /**
   * Converts the value at {@code at} of a body read as a tree into {@code type}; a failure is a 400
   * naming the field by its path from the top of the body. A JSON null converts to null.
   */
  static <T> T convert(JsonNode node, Class<T> type, String at) {
    try {
      return Json.MAPPER.readerFor(type).readValue(node);
    } catch (JsonProcessingException e) {
      throw JsonErrors.of(e, at);
    } catch (IOException e) {
      throw ApiException.badRequest(
          at, (at == null ? "the request body" : at) + " could not be read");
    }
  }

  private static <T> T notNull(T value) {
    if (value == null) {
      throw ApiException.badRequest(null, "the request body must be a JSON object, not null");
    }
    return value;
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
}
