package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.pgworkflows.testing.PostgresServer;
import dev.pgworkflows.testing.Psql;
import dev.pgworkflows.testing.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SQL block of docs/transactions.md, "Starting a workflow inside your own transaction", as
 * printed, run by the real {@code psql} (skipped where it is not installed; CI installs it), and
 * its Java example, as printed, by the JDK's {@code jshell}.
 */
class TransactionalStartPageTest {
  private static final Path PAGE = Path.of("../docs/transactions.md");
  private static final String HEADING = "## Starting a workflow inside your own transaction";

  /** The first {@code sql} block under the heading. */
  static String block() throws IOException {
    return block("```sql");
  }

  /** The first block opened by {@code fence} under the heading. */
  static String block(String fence) throws IOException {
    return block(PAGE, HEADING, fence);
  }

  /** The first block opened by {@code fence} under {@code heading} of the page. */
  static String block(Path page, String heading, String fence) throws IOException {
    List<String> lines = Files.readAllLines(page);
    int at = lines.indexOf(heading);
    assertThat(at).as("%s has \"%s\"", page, heading).isNotNegative();
    int open = lines.subList(at, lines.size()).indexOf(fence) + at;
    assertThat(open).as("a %s block under the heading", fence).isGreaterThan(at);
    List<String> block = new ArrayList<>();
    for (String line : lines.subList(open + 1, lines.size())) {
      if (line.equals("```")) {
        break;
      }
      block.add(line);
    }
    return String.join("\n", block) + "\n";
  }

  @Test
  void theBlockStartsOneRunWithTheRowAndItsKeyGivesItBackOnASecondRun() throws Exception {
    assumeTrue(Psql.installed(), "psql is not on the PATH");
    TestDatabase db = TestDatabase.fresh();
    String sql = block();
    String first = psql(db, sql);
    String second = psql(db, sql);
    assertThat(first).contains("ada@example.com").contains("running");
    assertThat(first).contains("{\"email\": \"ada@example.com\"}");
    // The same row both times: the key answered the first run.
    assertThat(lastRows(second)).isEqualTo(lastRows(first));
    try (Connection c = db.connect()) {
      assertThat(count(c, "SELECT count(*) FROM signups")).isEqualTo(1);
      assertThat(
              count(
                  c,
                  "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'onboard-user'"
                      + " AND idempotency_key = 'signup-ada@example.com'"))
          .isEqualTo(1);
      assertThat(count(c, "SELECT depth FROM queue.queue_metrics('__wf_onboard-user')"))
          .isEqualTo(1);
    }
  }

  @Test
  void theBlockWithRollbackInPlaceOfCommitLeavesNeitherTheRowNorTheRun() throws Exception {
    assumeTrue(Psql.installed(), "psql is not on the PATH");
    TestDatabase db = TestDatabase.fresh();
    String sql = block();
    assertThat(sql).contains("COMMIT;");
    psql(db, sql.replace("COMMIT;", "ROLLBACK;"));
    try (Connection c = db.connect()) {
      assertThat(count(c, "SELECT count(*) FROM signups")).isZero();
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isZero();
    }
  }

  /**
   * The {@code java} block after the SQL one, as printed, run twice by the JDK's {@code jshell} in
   * a directory holding {@code .workflows/pg-password}, after a preamble of the imports it assumes
   * and a JDBC driver that takes its URL ({@code 127.0.0.1:7701}, the embedded server's) to this
   * test's database, registered before PostgreSQL's own so that only it answers that URL.
   */
  @Test
  void theJavaExampleStartsOneRunWithTheRowAndItsKeyGivesItBackOnASecondRun(@TempDir Path dir)
      throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS signups (email text PRIMARY KEY, run_id bigint)");
    }
    String example = block("```java");
    assertThat(example).contains("WorkflowSql.start(");
    Files.createDirectories(dir.resolve(".workflows"));
    Files.writeString(dir.resolve(".workflows/pg-password"), "not-this-one\n");
    Path script = dir.resolve("example.jsh");
    Files.writeString(script, preamble(db) + example + "\n" + example + "\n/exit\n");
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path jshell = Path.of(System.getProperty("java.home"), "bin", "jshell");
    Process p =
        new ProcessBuilder(
                jshell.toString(),
                "--class-path",
                classPath,
                "--feedback",
                "concise",
                script.toString())
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("jshell: %s", out).isZero();
    assertThat(out).as("jshell's output").doesNotContain("Error:").doesNotContain("Exception");
    try (Connection c = db.connect()) {
      long runId = count(c, "SELECT run_id FROM signups WHERE email = 'ada@example.com'");
      assertThat(count(c, "SELECT count(*) FROM signups")).isEqualTo(1);
      assertThat(
              count(
                  c,
                  "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'onboard-user'"
                      + " AND input = '{\"email\": \"ada@example.com\"}'"
                      + " AND idempotency_key = 'signup-ada@example.com' AND run_id = "
                      + runId))
          .isEqualTo(1);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isEqualTo(1);
    }
  }

  /** The imports the page's Java example assumes, and its database mapped onto {@code db}. */
  private static String preamble(TestDatabase db) {
    return String.join(
        "\n",
        "import dev.pgworkflows.workflows.*;",
        "import java.nio.file.*;",
        "import java.sql.*;",
        "class ReadmeDatabase implements Driver {",
        "  public boolean acceptsURL(String url) {",
        "    return url.equals(\"jdbc:postgresql://127.0.0.1:7701/postgres\");",
        "  }",
        "  public Connection connect(String url, java.util.Properties info) throws SQLException {",
        "    if (!acceptsURL(url)) return null;",
        "    java.util.Properties as = new java.util.Properties();",
        "    as.setProperty(\"user\", " + literal(db.user()) + ");",
        db.password() == null
            ? ""
            : "    as.setProperty(\"password\", " + literal(db.password()) + ");",
        "    return new org.postgresql.Driver().connect(" + literal(db.jdbcUrl()) + ", as);",
        "  }",
        "  public DriverPropertyInfo[] getPropertyInfo(String u, java.util.Properties i) {",
        "    return new DriverPropertyInfo[0];",
        "  }",
        "  public int getMajorVersion() { return 1; }",
        "  public int getMinorVersion() { return 0; }",
        "  public boolean jdbcCompliant() { return false; }",
        "  public java.util.logging.Logger getParentLogger() { return null; }",
        "}",
        "DriverManager.registerDriver(new ReadmeDatabase());",
        "");
  }

  private static String literal(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /**
   * Runs {@code sql} through psql on {@code db}, stopping at the first error; returns its output.
   */
  private static String psql(TestDatabase db, String sql) throws Exception {
    return psql(db, sql, Path.of("."));
  }

  /** As {@link #psql(TestDatabase, String)}, with {@code dir} as psql's working directory. */
  static String psql(TestDatabase db, String sql, Path dir) throws Exception {
    PostgresServer pg = PostgresServer.get();
    Path script = Files.createTempFile("readme-", ".sql");
    try {
      Files.writeString(script, sql);
      ProcessBuilder pb =
          new ProcessBuilder(
                  "psql",
                  "-X",
                  "-v",
                  "ON_ERROR_STOP=1",
                  "-h",
                  pg.host(),
                  "-p",
                  Integer.toString(pg.port()),
                  "-U",
                  db.user(),
                  "-f",
                  script.toString(),
                  db.name())
              .directory(dir.toFile())
              .redirectErrorStream(true);
      pb.environment().put("PGPASSWORD", db.password() == null ? "" : db.password());
      Process p = pb.start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("psql: %s", out).isZero();
      return out;
    } finally {
      Files.deleteIfExists(script);
    }
  }

  /** The result rows of the block's final query. */
  private static List<String> lastRows(String out) {
    List<String> lines = out.lines().toList();
    int header = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains("email") && lines.get(i).contains("run_id")) {
        header = i;
      }
    }
    assertThat(header).as("the final query's header in %s", out).isNotNegative();
    return lines.subList(header, lines.size());
  }

  private static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
