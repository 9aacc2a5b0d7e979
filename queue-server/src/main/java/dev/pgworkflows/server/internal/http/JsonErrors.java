package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import java.math.BigInteger;
import java.time.temporal.Temporal;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Jackson's complaints about a request body in plain words: which field (a path such as {@code
 * completions[2].step.startedAt}) and what it should be. Jackson's own messages name Java classes
 * ({@code java.lang.Long}, {@code MessageRoutes$Send}) and its feature flags; none of that reaches
 * a client.
 */
final class JsonErrors {
  /** A Jackson token name such as START_OBJECT, or a Java package. */
  private static final Pattern JACKSON_WORD = Pattern.compile("[A-Z]+_[A-Z_]+|java\\.|\\$");

  private JsonErrors() {}

  /**
   * The 400 for {@code e}, raised reading the value at {@code at} (a field path; null for the whole
   * body), with the field it names.
   */
  static ApiException of(JsonProcessingException e, String at) {
    String field = join(at, path(e));
    Throwable cause = e.getCause();
    if (e instanceof UnrecognizedPropertyException u) {
      List<JsonMappingException.Reference> refs = u.getPath();
      String holder = refs.isEmpty() ? at : join(at, path(refs.subList(0, refs.size() - 1)));
      return ApiException.badRequest(
          field,
          "unknown field \""
              + field
              + "\"; the fields "
              + (holder == null ? "of the body" : "of " + holder)
              + " are "
              + String.join(", ", names(u.getKnownPropertyIds())));
    }
    if (e instanceof StreamConstraintsException || cause instanceof StreamConstraintsException) {
      JsonProcessingException limit = cause instanceof StreamConstraintsException l ? l : e;
      // The record's field when there is one: the parser's path into a nesting too deep is as
      // deep as the nesting.
      String inside = field == null ? parserPath(limit) : null;
      String where = inside == null || inside.length() > 100 ? field : join(at, inside);
      String words = limit(limit.getOriginalMessage());
      return ApiException.badRequest(where, where == null ? words : words + " (in " + where + ")");
    }
    InputCoercionException range =
        e instanceof InputCoercionException i
            ? i
            : cause instanceof InputCoercionException i ? i : null;
    if (range != null) {
      return ApiException.badRequest(
          field, name(field) + " must be " + range(range.getTargetType()));
    }
    if (e instanceof JsonParseException || cause instanceof JsonParseException) {
      // The parser knows the position better than the record being read: inside a JSON value
      // field the path stops at that field.
      JsonProcessingException parse = cause instanceof JsonParseException p ? p : e;
      String inside = parserPath(parse);
      String where = inside == null ? field : join(at, inside);
      return ApiException.badRequest(where, syntax(parse, where));
    }
    if (e instanceof MismatchedInputException m) {
      if (m.getOriginalMessage().startsWith("Trailing token")) {
        return ApiException.badRequest(
            null, "the request body must be one JSON value; more follows it");
      }
      if (field == null) {
        return ApiException.badRequest(
            null, "the request body must be " + expected(m.getTargetType()));
      }
      return ApiException.badRequest(field, field + " must be " + expected(m.getTargetType()));
    }
    return ApiException.badRequest(
        field, field == null ? "the request body could not be read" : field + " is not valid");
  }

  /** What a value read as {@code type} should be, in words. */
  private static String expected(Class<?> type) {
    if (type == null) {
      return "a different value";
    }
    if (type == Integer.class
        || type == int.class
        || type == Long.class
        || type == long.class
        || type == Short.class
        || type == short.class
        || type == BigInteger.class) {
      return "a whole number";
    }
    if (Number.class.isAssignableFrom(type) || type == double.class || type == float.class) {
      return "a number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == String.class || type == Character.class || type == char.class) {
      return "a string";
    }
    if (Temporal.class.isAssignableFrom(type)) {
      return "an RFC 3339 date-time string";
    }
    if (Collection.class.isAssignableFrom(type)
        || type.isArray()
        || ArrayNode.class.isAssignableFrom(type)) {
      return "an array";
    }
    if (type == JsonNode.class) {
      return "a JSON value";
    }
    if (type.isEnum()) {
      return "one of " + String.join(", ", enumNames(type));
    }
    return "an object"; // a record, a map, an ObjectNode
  }

  private static Collection<String> enumNames(Class<?> type) {
    TreeSet<String> names = new TreeSet<>();
    for (Object c : type.getEnumConstants()) {
      names.add(c.toString());
    }
    return names;
  }

  private static String range(Class<?> type) {
    if (type == Integer.class || type == int.class) {
      return "a whole number from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE;
    }
    if (type == Long.class || type == long.class) {
      return "a whole number from " + Long.MIN_VALUE + " to " + Long.MAX_VALUE;
    }
    return "a smaller number";
  }

  /** A syntax error: where, and Jackson's reason when it is plain words. */
  private static String syntax(JsonProcessingException e, String field) {
    String original = e.getOriginalMessage();
    if (original.startsWith("Duplicate field '") && field != null) {
      // The parser stands on the second occurrence: the path ends in the name.
      return "field \"" + field + "\" appears twice";
    }
    String at = "malformed JSON" + where(e) + (field == null ? "" : " in " + field);
    if (original.startsWith("Non-standard token")) {
      return at + ": NaN and Infinity are not JSON numbers";
    }
    String reason = original;
    int cut = reason.indexOf(" (start marker");
    if (cut >= 0) {
      reason = reason.substring(0, cut);
    }
    cut = reason.indexOf('\n');
    if (cut >= 0) {
      reason = reason.substring(0, cut);
    }
    reason = reason.replace("in VALUE_STRING", "in a string");
    // Anything that reads like Jackson's own settings or token names stays out.
    if (reason.contains("`") || reason.contains("Feature") || JACKSON_WORD.matcher(reason).find()) {
      return at;
    }
    return at + ": " + reason;
  }

  private static String where(JsonProcessingException e) {
    JsonLocation l = e.getLocation();
    if (l == null || l.getLineNr() < 1) {
      return "";
    }
    return " at line " + l.getLineNr() + ", column " + l.getColumnNr();
  }

  /** A limit of {@link Json}'s parser that a body broke. */
  private static String limit(String original) {
    if (original.contains("nesting depth")) {
      return "the JSON nests deeper than " + Json.MAX_NESTING + " levels";
    }
    if (original.contains("Number value length")) {
      return "a number in the JSON has too many digits (at most 1000)";
    }
    if (original.contains("String value length") || original.contains("Name length")) {
      return "a string in the JSON is too long";
    }
    return "the JSON is larger or deeper than this server reads";
  }

  /** The field a path names, for words: "the body" when it is the whole body. */
  private static String name(String field) {
    return field == null ? "the request body" : field;
  }

  private static Collection<String> names(Collection<Object> ids) {
    TreeSet<String> names = new TreeSet<>();
    for (Object id : ids) {
      names.add(String.valueOf(id));
    }
    return names;
  }

  /** {@code completions[2].step.startedAt}: field names joined by dots, indexes in brackets. */
  private static String path(JsonProcessingException e) {
    return e instanceof JsonMappingException m ? path(m.getPath()) : null;
  }

  private static String path(List<JsonMappingException.Reference> refs) {
    StringBuilder p = new StringBuilder();
    for (JsonMappingException.Reference r : refs) {
      if (r.getFieldName() != null) {
        if (p.length() > 0) {
          p.append('.');
        }
        p.append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        p.append('[').append(r.getIndex()).append(']');
      }
    }
    return p.length() == 0 ? null : p.toString();
  }

  /** The path of where the parser stood, in the same notation; null at the top. */
  private static String parserPath(JsonProcessingException e) {
    if (!(e.getProcessor() instanceof JsonParser p)) {
      return null;
    }
    Deque<String> parts = new ArrayDeque<>();
    for (JsonStreamContext c = p.getParsingContext(); c != null; c = c.getParent()) {
      if (c.inObject() && c.getCurrentName() != null) {
        parts.push("." + c.getCurrentName());
      } else if (c.inArray() && c.getCurrentIndex() >= 0) {
        parts.push("[" + c.getCurrentIndex() + "]");
      }
    }
    String path = String.join("", parts);
    if (path.isEmpty()) {
      return null;
    }
    return path.startsWith(".") ? path.substring(1) : path;
  }

  private static String join(String at, String path) {
    if (at == null) {
      return path;
    }
    if (path == null) {
      return at;
    }
    return path.startsWith("[") ? at + path : at + "." + path;
  }
}
