package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.stream.Collectors;

/** The server's one ObjectMapper, strict about what it accepts, and the JSON response helper. */
public final class Json {
  /** Nesting deeper than this is refused as hostile rather than parsed. */
  public static final int MAX_NESTING = 200;

  public static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .addModule(UtcInstants.module())
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .build();

  static {
    MAPPER
        .getFactory()
        .setStreamReadConstraints(
            StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING).build());
  }

  private Json() {}

  /** Parses the request body into {@code type}; every failure is a 400 naming the field. */
  public static <T> T body(Context ctx, Class<T> type) {
    byte[] raw = ctx.bodyAsBytes();
    if (raw.length == 0) {
      throw ApiException.badRequest(null, "the request needs a JSON body");
    }
    try {
      T value = MAPPER.readValue(raw, type);
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
      ctx.status(status).contentType("application/json").result(MAPPER.writeValueAsBytes(value));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("response could not be serialised", e);
    }
  }

  /** Serialises a value for a jsonb parameter. */
  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
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
