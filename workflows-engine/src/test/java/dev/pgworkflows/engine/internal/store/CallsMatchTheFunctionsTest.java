package dev.pgworkflows.engine.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every call the engine makes to a {@code queue.*} function, as its Java source spells it, fits a
 * function the migrated schema defines (from {@code sql/functions/}): the function exists, takes
 * that many arguments (counting its defaults), and each argument cast in the call is the type the
 * function declares at that place. A function renamed, an argument added or retyped in SQL fails
 * here, not at run time on some path.
 */
class CallsMatchTheFunctionsTest {
  private static final Path SOURCES = Path.of("src/main/java");

  /** A call: {@code queue.name(} up to its matching parenthesis. */
  private static final Pattern CALL = Pattern.compile("queue\\.([a-z_]+)\\(");

  /** One call as written. */
  record Call(String file, String function, List<String> args) {}

  @Test
  void everyCallFitsTheSignatureOfTheFunctionItNames() throws Exception {
    List<Call> calls = calls();
    assertThat(calls).as("calls found in the engine's sources").hasSizeGreaterThan(40);
    TestDatabase db = TestDatabase.fresh();
    List<String> misfits = new ArrayList<>();
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT p.pronargs, p.pronargdefaults,"
                    + " array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t)"
                    + " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                    + " WHERE n.nspname = 'queue' AND p.proname = ?")) {
      for (Call call : calls) {
        ps.setString(1, call.function());
        List<String> found = new ArrayList<>();
        boolean fits = false;
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            int args = rs.getInt(1);
            int defaults = rs.getInt(2);
            String[] types = (String[]) rs.getArray(3).getArray();
            found.add(String.join(", ", types));
            fits |= fits(call.args(), args, defaults, types);
          }
        }
        if (!fits) {
          misfits.add(
              call.file()
                  + ": queue."
                  + call.function()
                  + call.args()
                  + (found.isEmpty() ? " is not defined" : " fits none of " + found));
        }
      }
    }
    assertThat(misfits).as("calls that fit no function").isEmpty();
  }

  private static boolean fits(List<String> args, int count, int defaults, String[] types) {
    if (args.size() > count || args.size() < count - defaults) {
      return false;
    }
    for (int i = 0; i < args.size(); i++) {
      String cast = cast(args.get(i));
      if (cast != null && !sameType(cast, types[i])) {
        return false;
      }
    }
    return true;
  }

  /** The type an argument is cast to at its end ({@code ?::bigint}), or null. */
  private static String cast(String arg) {
    Matcher m = Pattern.compile("::([a-z ]+(?:\\[\\])?)$").matcher(arg.strip());
    return m.find() ? m.group(1).strip() : null;
  }

  private static boolean sameType(String cast, String declared) {
    return normal(cast).equals(normal(declared));
  }

  private static String normal(String type) {
    return switch (type) {
      case "int", "int4", "integer" -> "integer";
      case "int8", "bigint" -> "bigint";
      case "timestamptz", "timestamp with time zone" -> "timestamp with time zone";
      case "bool", "boolean" -> "boolean";
      case "int[]", "integer[]" -> "integer[]";
      case "bigint[]", "int8[]" -> "bigint[]";
      case "float8", "double precision" -> "double precision";
      case "timestamptz[]", "timestamp with time zone[]" -> "timestamp with time zone[]";
      default -> type;
    };
  }

  /** The calls in the engine's sources, string literals joined across their concatenations. */
  static List<Call> calls() throws IOException {
    List<Call> calls = new ArrayList<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String joined = Files.readString(f).replaceAll("\"\\s*\\+\\s*\"", "");
        Matcher m = CALL.matcher(joined);
        while (m.find()) {
          List<String> args = arguments(joined, m.end());
          if (args != null) {
            calls.add(new Call(f.getFileName().toString(), m.group(1), args));
          }
        }
      }
    }
    return calls;
  }

  /**
   * The arguments from {@code from} (just past the opening parenthesis) to the matching closing
   * one, split at the top-level commas; null when the call is not written out whole in one literal.
   */
  private static List<String> arguments(String s, int from) {
    List<String> args = new ArrayList<>();
    int depth = 0;
    boolean quoted = false;
    StringBuilder arg = new StringBuilder();
    for (int i = from; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\n') {
        return null; // the literal ends before the call does: built some other way
      }
      if (ch == '\'') {
        quoted = !quoted;
      } else if (quoted) {
        // inside an SQL string: its commas and parentheses are text
      } else if (ch == '(') {
        depth++;
      } else if (ch == ')') {
        if (depth == 0) {
          if (!arg.toString().isBlank() || !args.isEmpty()) {
            args.add(arg.toString().strip());
          }
          return args;
        }
        depth--;
      } else if (ch == ',' && depth == 0) {
        args.add(arg.toString().strip());
        arg.setLength(0);
        continue;
      }
      arg.append(ch);
    }
    return null;
  }
}
