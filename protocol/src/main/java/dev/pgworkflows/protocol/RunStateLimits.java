package dev.pgworkflows.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The limits of a run's state, which the SDK and the server both check (the SQL functions check
 * them again): keys of 1 to {@value #MAX_KEY_LENGTH} characters of a-z, A-Z, 0-9, ".", "_" and "-"
 * not starting "__" (kept for the engine), values of at most {@value #MAX_VALUE_BYTES} bytes of
 * compact JSON, at most {@value #MAX_KEYS} keys set in one run.
 */
public final class RunStateLimits {
  public static final int MAX_KEY_LENGTH = 128;
  public static final int MAX_VALUE_BYTES = 65_536;
  public static final int MAX_KEYS = 100;

  private static final Pattern KEY = Pattern.compile("[a-zA-Z0-9._-]{1,128}");
  private static final ObjectMapper COMPACT = new ObjectMapper();

  private RunStateLimits() {}

  /** Why {@code key} cannot be a state key (the message names {@code field}), or null. */
  public static String keyProblem(String field, String key) {
    if (key == null || !KEY.matcher(key).matches() || key.startsWith("__")) {
      return field
          + " key \""
          + (key == null ? "null" : key.length() > 140 ? key.substring(0, 140) + "..." : key)
          + "\" must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\", not"
          + " starting \"__\"";
    }
    return null;
  }

  /** Why {@code value} cannot be the value of {@code key} (too large), or null. */
  public static String valueProblem(String field, String key, JsonNode value) {
    int bytes = bytes(value);
    if (bytes > MAX_VALUE_BYTES) {
      return field
          + " value of key \""
          + key
          + "\" is "
          + bytes
          + " bytes of JSON; at most "
          + MAX_VALUE_BYTES;
    }
    return null;
  }

  /**
   * Why {@code changes} (key to value, JSON null removing a key) cannot be journaled, or null: not
   * an object, a bad key, a value too large, or more keys than a run may hold.
   */
  public static String changesProblem(String field, JsonNode changes) {
    if (changes == null || changes.isNull()) {
      return null;
    }
    if (!changes.isObject()) {
      return field + " must be an object of state keys to JSON values";
    }
    if (changes.size() > MAX_KEYS) {
      return field + " changes " + changes.size() + " keys; a run holds at most " + MAX_KEYS;
    }
    for (Map.Entry<String, JsonNode> e : changes.properties()) {
      String problem = keyProblem(field, e.getKey());
      if (problem == null) {
        problem = valueProblem(field, e.getKey(), e.getValue());
      }
      if (problem != null) {
        return problem;
      }
    }
    return null;
  }

  private static int bytes(JsonNode value) {
    if (value == null) {
      return 4;
    }
    if (value.isValueNode() && !value.isTextual()) {
      return value.toString().length();
    }
    try {
      return COMPACT.writeValueAsString(value).getBytes(StandardCharsets.UTF_8).length;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("a state value that cannot be written as JSON", e);
    }
  }
}
