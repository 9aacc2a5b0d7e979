package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.pgworkflows.testing.PostgresServer;
import dev.pgworkflows.testing.TestDatabase;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The SQL block of the README's "Starting a workflow inside your own transaction", as printed, run
 * by the real {@code psql} (skipped where it is not installed; CI installs it), and its Java
 * example through {@link WorkflowSql}.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReadmeTransactionalStartTest {
  private static final Path README = Path.of("../README.md");
  private static final String HEADING = "## Starting a workflow inside your own transaction";

  /** The first {@code sql} block under the heading. */
  static String block() throws IOException {
    List<String> lines = Files.readAllLines(README);
    int at = lines.indexOf(HEADING);
    assertThat(at).as("README has \"%s\"", HEADING).isNotNegative();
    int open = lines.subList(at, lines.size()).indexOf("```sql") + at;
    assertThat(open).as("an sql block under the heading").isGreaterThan(at);
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
    assumeTrue(psqlInstalled(), "psql is not on the PATH");
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
    assumeTrue(psqlInstalled(), "psql is not on the PATH");
    TestDatabase db = TestDatabase.fresh();
    String sql = block();
    assertThat(sql).contains("COMMIT;");
    psql(db, sql.replace("COMMIT;", "ROLLBACK;"));
    try (Connection c = db.connect()) {
      assertThat(count(c, "SELECT count(*) FROM signups")).isZero();
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isZero();
    }
  }

  record Signup(String email) {}

  /** The README's Java example after its SQL block, on a plain JDBC connection, run twice. */
  @Test
  void theJavaExampleStartsOneRunWithTheRowAndItsKeyGivesItBackOnASecondRun() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS signups (email text PRIMARY KEY, run_id bigint)");
    }
    List<Started> runs = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password())) {
        c.setAutoCommit(false);
        Started run =
            WorkflowSql.start(
                c,
                "onboard-user",
                new Signup("ada@example.com"),
                StartOptions.idempotencyKey("signup-ada@example.com"));
        try (PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO signups (email, run_id) VALUES (?, ?) ON CONFLICT (email) DO NOTHING")) {
          insert.setString(1, "ada@example.com");
          insert.setLong(2, run.runId());
          insert.executeUpdate();
        }
        c.commit();
        runs.add(run);
      }
    }
    assertThat(runs.get(0).created()).isTrue();
    assertThat(runs.get(1).created()).isFalse();
    assertThat(runs.get(1).runId()).isEqualTo(runs.get(0).runId());
    try (Connection c = db.connect()) {
      assertThat(count(c, "SELECT run_id FROM signups")).isEqualTo(runs.get(0).runId());
      assertThat(
              count(
                  c,
                  "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'onboard-user'"
                      + " AND input = '{\"email\": \"ada@example.com\"}'"))
          .isEqualTo(1);
    }
  }

  private static boolean psqlInstalled() {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "psql"))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs {@code sql} through psql on {@code db}, stopping at the first error; returns its output.
   */
  private static String psql(TestDatabase db, String sql) throws Exception {
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
