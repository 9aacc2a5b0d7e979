package dev.pgworkflows.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import java.io.IOException;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java block of the README and the guides compiles, as printed, against this build's API, and
 * those marked {@code <!-- runs -->} run against a server of this build, a fresh one for each; a
 * shell block marked so runs with bash against the server of the Java block above it (or a fresh
 * one), and must exit 0 printing no problem. A block may name things the page leaves to the reader
 * (a mail service, a run id): an HTML comment right above it, {@code <!-- given: ... -->}, declares
 * them as members of the class the block is compiled in (a {@code setup()} among them runs before
 * the block); a reader of the page does not see it. An HTML comment right below a block that runs,
 * {@code <!-- then: ... -->}, holds the statements that run after it: what checks that the block
 * did what the page says. The block's own top-level records and interfaces become nested types of
 * that class, its statements the body of a method, or, when it declares methods (a test), members
 * of the class, whose tests are run. A block that runs talks to its page's server where the page
 * says {@code http://localhost:7700}.
 */
class GuideBlocksTest {
  private static final String IMPORTS =
      """
      import static org.assertj.core.api.Assertions.assertThat;
      import static org.assertj.core.api.Assertions.assertThatThrownBy;

      import com.fasterxml.jackson.databind.JsonNode;
      import com.zaxxer.hikari.HikariConfig;
      import com.zaxxer.hikari.HikariDataSource;
      import dev.pgworkflows.testkit.*;
      import dev.pgworkflows.workflows.*;
      import java.net.URI;
      import java.net.http.HttpClient;
      import java.net.http.HttpRequest;
      import java.net.http.HttpResponse;
      import java.nio.file.Files;
      import java.nio.file.Path;
      import java.sql.Connection;
      import java.sql.DriverManager;
      import java.sql.PreparedStatement;
      import java.time.*;
      import java.util.*;
      import org.junit.jupiter.api.Test;
      """;

  /** One Java block: where it is, what the page gives it, and its lines. */
  record Block(
      String page,
      int line,
      String lang,
      String given,
      boolean runs,
      List<String> lines,
      String then) {
    boolean java() {
      return lang.equals("java");
    }

    String className() {
      return "Block_" + page.replaceAll("[^A-Za-z0-9]", "_").replaceAll("^_+", "") + "_" + line;
    }
  }

  @Test
  void everyJavaBlockOfTheDocsCompiles() throws IOException {
    List<Block> blocks = allBlocks().stream().filter(Block::java).toList();
    assertThat(blocks).as("Java blocks in the docs").hasSizeGreaterThan(15);
    compile(blocks, "http://localhost:7700");
  }

  @Test
  void theBlocksMarkedToRunRunAgainstAServer(@TempDir Path data) throws Exception {
    List<Block> marked = allBlocks().stream().filter(Block::runs).toList();
    assertThat(marked.stream().filter(Block::java))
        .as("Java blocks marked <!-- runs -->")
        .hasSizeGreaterThanOrEqualTo(14);
    Map<String, List<Block>> byPage = new LinkedHashMap<>();
    marked.forEach(b -> byPage.computeIfAbsent(b.page(), p -> new ArrayList<>()).add(b));
    for (var page : byPage.entrySet()) {
      QueueServer server = null;
      try {
        for (Block b : page.getValue()) {
          if (b.java() || server == null) {
            if (server != null) {
              server.close();
            }
            server = freshServer(data.resolve(b.className()));
          }
          String url = "http://127.0.0.1:" + server.port();
          if (b.java()) {
            Path classes = compile(List.of(b), url);
            try (URLClassLoader loader =
                new URLClassLoader(
                    new URL[] {classes.toUri().toURL()}, GuideBlocksTest.class.getClassLoader())) {
              run(b, loader.loadClass(b.className()));
            }
          } else {
            runShell(b, url);
          }
        }
      } finally {
        if (server != null) {
          server.close();
        }
      }
    }
  }

  /** A server of this build on an embedded PostgreSQL of its own, in {@code dir}. */
  private static QueueServer freshServer(Path dir) {
    return QueueServer.start(
        ServerConfig.from(
            Map.of(
                "WORKFLOWS_PORT", "0",
                "WORKFLOWS_EMBEDDED_PG_PORT", "0",
                "WORKFLOWS_DATA_DIR", dir.toString())));
  }

  /**
   * Runs a shell block with bash, as printed but for the server's address, {@code H} set as the
   * guides set it, after its {@code <!-- given: -->} lines (a setup that makes the state the block
   * acts on, and sets the variables it names): it must exit 0, and no answer it prints may be a
   * problem.
   */
  private static void runShell(Block b, String url) throws Exception {
    String printed = (b.given().isEmpty() ? "" : b.given() + "\n") + String.join("\n", b.lines());
    String script =
        printed
            .replace("http://localhost:7700", url)
            .replace("localhost:7700", url.substring("http://".length()));
    ProcessBuilder pb = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script);
    pb.environment().put("H", "Authorization: Bearer dev");
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS))
        .as("%s (block at line %d) ends", b.page(), b.line())
        .isTrue();
    assertThat(p.exitValue()).as("%s (block at line %d): %s", b.page(), b.line(), out).isZero();
    assertThat(out)
        .as("%s (block at line %d) printed a problem", b.page(), b.line())
        .doesNotContainPattern("\"status\":[45][0-9][0-9]");
  }

  /** Runs a block's setup, then the block (or its tests), on a thread of its own, within 90 s. */
  private static void run(Block b, Class<?> type) throws Exception {
    var constructor = type.getDeclaredConstructor();
    constructor.setAccessible(true);
    Object instance = constructor.newInstance();
    List<Method> steps = new ArrayList<>();
    for (String name : List.of("setup", "block")) {
      Arrays.stream(type.getDeclaredMethods())
          .filter(m -> m.getName().equals(name) && m.getParameterCount() == 0)
          .forEach(steps::add);
    }
    Arrays.stream(type.getDeclaredMethods())
        .filter(m -> m.isAnnotationPresent(Test.class))
        .sorted(Comparator.comparing(Method::getName))
        .forEach(steps::add);
    assertThat(steps)
        .as("%s (block at line %d) has something to run", b.page(), b.line())
        .isNotEmpty();
    ExecutorService one = Executors.newSingleThreadExecutor();
    try {
      one.submit(
              () -> {
                for (Method m : steps) {
                  m.setAccessible(true);
                  m.invoke(instance);
                }
                return null;
              })
          .get(90, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable cause =
          e.getCause() instanceof InvocationTargetException i ? i.getCause() : e.getCause();
      throw new AssertionError(
          b.page() + " (block at line " + b.line() + ") failed: " + cause, cause);
    } finally {
      one.shutdownNow();
    }
  }

  private static List<Block> allBlocks() throws IOException {
    List<Block> blocks = new ArrayList<>();
    blocks.addAll(blocks(Path.of("../README.md")));
    try (Stream<Path> pages = Files.list(Path.of("../docs"))) {
      for (Path page : pages.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
        blocks.addAll(blocks(page));
      }
    }
    return blocks;
  }

  /**
   * The blocks compiled into a directory of their own, each talking to {@code url} where the page
   * says http://localhost:7700; fails naming the page and the line of each error.
   */
  private static Path compile(List<Block> blocks, String url) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<JavaFileObject> sources = new ArrayList<>();
    for (Block b : blocks) {
      sources.add(new Source(b.className(), source(b).replace("http://localhost:7700", url)));
    }
    DiagnosticCollector<JavaFileObject> problems = new DiagnosticCollector<>();
    Path out = Files.createTempDirectory("guide-blocks");
    StandardJavaFileManager files = javac.getStandardFileManager(problems, null, null);
    List<String> options =
        List.of(
            "-proc:none",
            "-classpath",
            System.getProperty("java.class.path"),
            "-d",
            out.toString(),
            "-Xlint:none",
            "-nowarn");
    boolean ok = javac.getTask(new StringWriter(), files, problems, options, null, sources).call();
    List<String> errors =
        problems.getDiagnostics().stream()
            .filter(d -> d.getKind() == javax.tools.Diagnostic.Kind.ERROR)
            .map(
                d -> {
                  String name = ((Source) d.getSource()).name;
                  Block b =
                      blocks.stream().filter(x -> x.className().equals(name)).findFirst().get();
                  return b.page()
                      + " (block at line "
                      + b.line()
                      + "): "
                      + d.getMessage(null)
                      + "\n    "
                      + sourceLine((Source) d.getSource(), d.getLineNumber());
                })
            .toList();
    assertThat(errors).as("compile errors in the docs' Java blocks").isEmpty();
    assertThat(ok).isTrue();
    return out;
  }

  private static List<Block> blocks(Path page) throws IOException {
    List<String> lines = Files.readAllLines(page);
    List<Block> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (!lines.get(i).equals("```java") && !lines.get(i).equals("```sh")) {
        continue;
      }
      String lang = lines.get(i).substring(3);
      int open = i;
      List<String> body = new ArrayList<>();
      for (i = i + 1; i < lines.size() && !lines.get(i).equals("```"); i++) {
        body.add(lines.get(i));
      }
      String given = given(lines, open);
      int above = given.isEmpty() ? open - 1 : open - given.split("\n", -1).length - 3;
      boolean runs = above >= 0 && lines.get(above).equals("<!-- runs -->");
      out.add(new Block(page.toString(), open + 1, lang, given, runs, body, then(lines, i)));
    }
    return out;
  }

  /** The declarations of the {@code <!-- given: ... -->} comment right above line {@code open}. */
  private static String given(List<String> lines, int open) {
    if (open == 0 || !lines.get(open - 1).equals("-->")) {
      return "";
    }
    int start = open - 1;
    while (start > 0 && !lines.get(start).equals("<!-- given:")) {
      start--;
    }
    assertThat(lines.get(start))
        .as("the comment above line %d opens", open + 1)
        .isEqualTo("<!-- given:");
    return String.join("\n", lines.subList(start + 1, open - 1));
  }

  /** The statements of the {@code <!-- then: ... -->} comment right below line {@code close}. */
  private static String then(List<String> lines, int close) {
    if (close + 1 >= lines.size() || !lines.get(close + 1).equals("<!-- then:")) {
      return "";
    }
    int end = close + 2;
    while (end < lines.size() && !lines.get(end).equals("-->")) {
      end++;
    }
    return String.join("\n", lines.subList(close + 2, end));
  }

  /** The block as a class: its types nested, its statements (and then's) a method's body. */
  static String source(Block b) {
    List<String> types = new ArrayList<>();
    List<String> rest = new ArrayList<>();
    List<String> lines = b.lines();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.matches("(record|interface|enum) .*")) {
        types.add(line);
        while (!line.endsWith("}") && i + 1 < lines.size()) {
          line = lines.get(++i);
          types.add(line);
        }
      } else {
        rest.add(line);
      }
    }
    boolean members = rest.stream().anyMatch(l -> l.startsWith("@Test"));
    StringBuilder s = new StringBuilder(IMPORTS);
    s.append("@SuppressWarnings({\"unused\", \"rawtypes\", \"unchecked\"})\n");
    s.append("class ").append(b.className()).append(" {\n");
    types.forEach(t -> s.append(t).append('\n'));
    s.append(b.given()).append('\n');
    if (!members) {
      s.append("void block() throws Exception {\n");
    }
    rest.forEach(t -> s.append(t).append('\n'));
    if (!members) {
      s.append(b.then()).append('\n');
      s.append("}\n");
    }
    return s.append("}\n").toString();
  }

  private static String sourceLine(Source s, long line) {
    String[] lines = s.text.split("\n", -1);
    return line >= 1 && line <= lines.length ? lines[(int) line - 1].strip() : "";
  }

  /** A block's class, in memory. */
  private static final class Source extends SimpleJavaFileObject {
    final String name;
    final String text;

    Source(String name, String text) {
      super(URI.create("string:///" + name + ".java"), Kind.SOURCE);
      this.name = name;
      this.text = text;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return text;
    }
  }
}
