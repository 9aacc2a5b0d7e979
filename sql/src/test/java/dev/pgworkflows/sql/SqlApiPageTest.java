package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/sql-api.md} is made from {@code sql/functions/}: each function with its arguments,
 * its result, the comment above it, the roles that may call it, and the SQLSTATEs it may raise (its
 * own and those of the functions it calls). The page in the repository must be what the files make
 * now; {@code -Dsql.api.write=true} rewrites it.
 */
class SqlApiPageTest {
  private static final Path FUNCTIONS = Path.of("functions");
  private static final Path PAGE = Path.of("../docs/sql-api.md");
  private static final Pattern CREATE =
      Pattern.compile("^CREATE OR REPLACE FUNCTION queue\\.([a-z_0-9]+)\\((.*)\\)$");
  private static final Pattern ERRCODE = Pattern.compile("ERRCODE = '([0-9A-Z]{5})'");
  private static final Pattern CALL = Pattern.compile("queue\\.([a-z_0-9]+)\\(");
  private static final Pattern ROLE_LIST =
      Pattern.compile(
          "FUNCTION queue\\.(client|worker)_functions\\(\\)[\\s\\S]*?ARRAY\\[([\\s\\S]*?)\\]");

  /** One function as its file defines it. */
  record Function(
      String file,
      String name,
      String args,
      String returns,
      List<String> comment,
      Set<String> raises,
      Set<String> calls) {}

  @Test
  void thePageIsWhatTheFunctionFilesMake() throws IOException {
    String made = page();
    if (Boolean.getBoolean("sql.api.write")) {
      Files.writeString(PAGE, made);
    }
    assertThat(Files.readString(PAGE))
        .as("docs/sql-api.md, made from sql/functions/ (-Dsql.api.write=true rewrites it)")
        .isEqualTo(made);
  }

  static String page() throws IOException {
    List<Function> functions = new ArrayList<>();
    for (String file : Files.readAllLines(FUNCTIONS.resolve("index.txt"))) {
      if (!file.isBlank()) {
        functions.addAll(functions(file.strip()));
      }
    }
    Map<String, Set<String>> own = new LinkedHashMap<>();
    Map<String, Set<String>> calls = new LinkedHashMap<>();
    for (Function f : functions) {
      own.computeIfAbsent(f.name(), k -> new TreeSet<>()).addAll(f.raises());
      calls.computeIfAbsent(f.name(), k -> new TreeSet<>()).addAll(f.calls());
    }
    Map<String, Set<String>> roles = roles();
    StringBuilder out = new StringBuilder();
    out.append("# SQL API\n\n")
        .append("Every function of schema `queue`, file by file in the order the migrator applies")
        .append(" them. This page is made from\n`sql/functions/` by `SqlApiPageTest`, which fails")
        .append(" the build when the two differ; the model behind them is\nin")
        .append(" [`sql/README.md`](../sql/README.md). A role of")
        .append(" [least privilege](security.md#least-privilege-in-the-database) may call only\n")
        .append("the functions marked for it. The SQLSTATEs a function may raise are its own and")
        .append(" those of the functions it\ncalls:\n\n")
        .append("| SQLSTATE | Meaning | Server answer |\n|---|---|---|\n")
        .append("| 22023 | a bad argument, named in the message | 400 |\n")
        .append("| 23514 | a row rule a field broke | 400 |\n")
        .append(
            "| P0002 | what the call names does not exist (a run, a queue, a schedule) | 404 |\n")
        .append("| 42710 | it exists already | 409 |\n")
        .append("| WF001 | a workflow's queue takes sends only | 409 |\n")
        .append("| WF002 | a parent that is not running starts no children | 409 |\n")
        .append("| WF003 | the run is in the wrong state for the action | 409 |\n")
        .append("| 40001 | a conflict with a concurrent transaction: try again | 503 |\n");
    String file = null;
    for (Function f : functions) {
      if (!f.file().equals(file)) {
        file = f.file();
        out.append("\n## ").append(file).append("\n");
      }
      out.append("\n### ").append(f.name()).append("\n\n```sql\nqueue.").append(f.name());
      out.append("(").append(f.args()).append(")\n").append(f.returns()).append("\n```\n");
      if (!f.comment().isEmpty()) {
        out.append("\n").append(String.join("\n", f.comment())).append("\n");
      }
      Set<String> mayCall = new TreeSet<>();
      roles.forEach(
          (role, names) -> {
            if (names.contains(f.name())) {
              mayCall.add("`pgworkflows_" + role + "`");
            }
          });
      if (!mayCall.isEmpty()) {
        out.append("\nCalled by ").append(String.join(" and ", mayCall)).append(".\n");
      }
      Set<String> raises = raises(f.name(), own, calls, new TreeSet<>());
      if (!raises.isEmpty()) {
        out.append("\nRaises ").append(String.join(", ", raises)).append(".\n");
      }
    }
    return out.toString();
  }

  /** The functions of one file, each with the comment lines right above it. */
  private static List<Function> functions(String file) throws IOException {
    List<String> lines = Files.readAllLines(FUNCTIONS.resolve(file));
    List<Function> out = new ArrayList<>();
    List<String> comment = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.startsWith("-- ") || line.equals("--")) {
        comment.add(line.length() > 3 ? line.substring(3) : "");
        continue;
      }
      if (line.startsWith("DROP FUNCTION")) {
        continue;
      }
      Matcher m = CREATE.matcher(line);
      if (!m.matches()) {
        comment.clear();
        continue;
      }
      String returns = lines.get(i + 1).strip();
      int end = i + 1;
      while (!lines.get(end).strip().endsWith("$$;")) {
        end++;
      }
      String body = String.join("\n", lines.subList(i + 1, end + 1));
      Set<String> raises = new TreeSet<>();
      Matcher e = ERRCODE.matcher(body);
      while (e.find()) {
        raises.add(e.group(1));
      }
      Set<String> calls = new TreeSet<>();
      Matcher c = CALL.matcher(body);
      while (c.find()) {
        if (!c.group(1).equals(m.group(1))) {
          calls.add(c.group(1));
        }
      }
      out.add(
          new Function(file, m.group(1), m.group(2), returns, List.copyOf(comment), raises, calls));
      comment.clear();
      i = end;
    }
    return out;
  }

  private static Set<String> raises(
      String name, Map<String, Set<String>> own, Map<String, Set<String>> calls, Set<String> seen) {
    Set<String> out = new TreeSet<>(own.getOrDefault(name, Set.of()));
    if (seen.add(name)) {
      for (String callee : calls.getOrDefault(name, Set.of())) {
        out.addAll(raises(callee, own, calls, seen));
      }
    }
    return out;
  }

  /** The functions each role of least privilege may call, as roles.sql lists them. */
  private static Map<String, Set<String>> roles() throws IOException {
    Map<String, Set<String>> out = new LinkedHashMap<>();
    Matcher m = ROLE_LIST.matcher(Files.readString(FUNCTIONS.resolve("roles.sql")));
    while (m.find()) {
      Set<String> names = new TreeSet<>();
      Matcher q = Pattern.compile("'([a-z_0-9]+)'").matcher(m.group(2));
      while (q.find()) {
        names.add(q.group(1));
      }
      out.put(m.group(1), names);
    }
    assertThat(out).as("the role lists of roles.sql").containsKeys("client", "worker");
    return out;
  }
}
