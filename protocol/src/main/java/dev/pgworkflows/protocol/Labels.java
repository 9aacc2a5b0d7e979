package dev.pgworkflows.protocol;

import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Worker labels and label selectors: label name to value, such as {@code region=eu} or {@code
 * gpu=true}. A worker declares labels; a selector names labels a worker must have all of. The rules
 * are the SQL function {@code check_labels}'s; both ends check them before any I/O.
 */
public final class Labels {
  /** The most labels a worker or a selector has. */
  public static final int MAX = 20;

  private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?");
  private static final Pattern VALUE =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._:/-]{0,61}[A-Za-z0-9])?");

  private Labels() {}

  /**
   * The labels of {@code text}, written {@code name=value,name=value} (blank: none), checked as
   * {@link #check}; an {@link Invalid} naming {@code field} otherwise.
   */
  public static Map<String, String> parse(String field, String text) {
    Map<String, String> out = new TreeMap<>();
    if (text == null || text.isBlank()) {
      return out;
    }
    for (String pair : text.split(",", -1)) {
      int eq = pair.indexOf('=');
      if (eq < 0) {
        throw new Invalid(
            field,
            field
                + " must be name=value pairs separated by commas, such as region=eu,gpu=true;"
                + " \""
                + shorten(pair.strip())
                + "\" has no \"=\"");
      }
      String name = pair.substring(0, eq).strip();
      if (out.put(name, pair.substring(eq + 1).strip()) != null) {
        throw new Invalid(field, field + " names label \"" + shorten(name) + "\" twice");
      }
    }
    return check(field, out, 1);
  }

  /**
   * {@code labels}, sorted by name, when they are {@code min} to {@link #MAX} labels, each name 1
   * to 63 lower-case letters, digits and {@code ._/-} and each value 1 to 63 letters, digits and
   * {@code ._:/-}, both starting and ending with a letter or digit; an {@link Invalid} naming
   * {@code field} (or {@code field.name}) otherwise.
   */
  public static Map<String, String> check(String field, Map<String, String> labels, int min) {
    if (labels == null || labels.size() < min || labels.size() > MAX) {
      throw new Invalid(
          field, field + " must be an object of " + min + " to " + MAX + " labels, name to value");
    }
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, String> e : labels.entrySet()) {
      String name = e.getKey();
      if (name == null || !NAME.matcher(name).matches()) {
        throw new Invalid(
            field,
            field
                + " has a label name \""
                + shorten(String.valueOf(name))
                + "\" that is not 1 to 63 lower-case letters, digits and ._/- starting and"
                + " ending with a letter or digit");
      }
      if (e.getValue() == null || !VALUE.matcher(e.getValue()).matches()) {
        throw new Invalid(
            field + "." + name,
            field
                + "."
                + name
                + " must be a string of 1 to 63 letters, digits and ._:/- starting and ending"
                + " with a letter or digit");
      }
      out.put(name, e.getValue());
    }
    return out;
  }

  /** {@code labels} as {@code name=value,name=value}, by name. */
  public static String format(Map<String, String> labels) {
    StringJoiner j = new StringJoiner(",");
    new TreeMap<>(labels).forEach((k, v) -> j.add(k + "=" + v));
    return j.toString();
  }

  /** Labels that break the rules: {@link #field()} names where. */
  public static final class Invalid extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String field;

    Invalid(String field, String message) {
      super(message);
      this.field = field;
    }

    /** The field (or {@code field.name}) at fault. */
    public String field() {
      return field;
    }
  }

  private static String shorten(String s) {
    return s.length() > 80 ? s.substring(0, 80) + "..." : s;
  }
}
