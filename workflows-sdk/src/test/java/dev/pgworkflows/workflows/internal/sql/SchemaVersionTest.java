package dev.pgworkflows.workflows.internal.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.Migrations;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.QueueSchemaException;
import dev.pgworkflows.workflows.WorkflowSql;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The schema check {@link WorkflowSql} makes before its calls, and how long it trusts it. */
class SchemaVersionTest {

  @Test
  void theSdkExpectsTheSchemaVersionOfTheMigrationsItShipsWith() throws Exception {
    assertThat(SchemaVersion.EXPECTED).isEqualTo(Migrations.latestVersion());
    try (Connection c = TestDatabase.fresh().connect()) {
      assertThat(count(c, "SELECT max(version) FROM queue.schema_version"))
          .isEqualTo(SchemaVersion.EXPECTED);
    }
  }

  @Test
  void aDatabaseAtAnotherSchemaVersionIsNamedWithBothVersions() throws Exception {
    TestDatabase other = TestDatabase.fresh();
    int newer = SchemaVersion.EXPECTED + 1;
    try (Connection c = other.connect()) {
      exec(c, future(newer));
      c.setAutoCommit(false);
      assertThatThrownBy(() -> WorkflowSql.start(c, "sql-future", "x", null))
          .isInstanceOf(QueueSchemaException.class)
          .hasMessageContaining("version " + newer)
          .hasMessageContaining("built for version " + SchemaVersion.EXPECTED);
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isZero();
      c.commit();
    }
  }

  @Test
  void aFunctionTheSdkCallsMissingAtTheRightVersionIsNamed() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect()) {
      exec(c, "DROP FUNCTION queue.workflow_signal(bigint, text, jsonb, text)");
      assertThatThrownBy(() -> WorkflowSql.start(c, "sql-lacking", "x", null))
          .isInstanceOf(QueueSchemaException.class)
          .hasMessageContaining("lacks queue.workflow_signal(bigint,text,jsonb,text)")
          .satisfies(
              e ->
                  assertThat(((QueueSchemaException) e).foundVersion())
                      .isEqualTo(SchemaVersion.EXPECTED));
      assertThat(count(c, "SELECT count(*) FROM queue.workflow_run")).isZero();
    }
  }

  @Test
  void aVersionChangeAfterAGoodCheckIsNoticedOnceTheCheckIsOlderThanItsTtl() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    AtomicLong now = new AtomicLong(0);
    SchemaVersion.clock = now::get;
    try (Connection c = db.connect()) {
      WorkflowSql.start(c, "sql-stale", "first", null);
      exec(c, future(SchemaVersion.EXPECTED + 1));
      // Within the TTL the good check stands.
      now.addAndGet(SchemaVersion.TTL.toNanos() - 1);
      WorkflowSql.start(c, "sql-stale", "second", null);
      now.addAndGet(1);
      assertThatThrownBy(() -> WorkflowSql.start(c, "sql-stale", "third", null))
          .isInstanceOf(QueueSchemaException.class)
          .satisfies(
              e ->
                  assertThat(((QueueSchemaException) e).foundVersion())
                      .isEqualTo(SchemaVersion.EXPECTED + 1));
      assertThat(
              count(c, "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = 'sql-stale'"))
          .isEqualTo(2);
      // Put right again, it is trusted again at once (a wrong database is not remembered).
      exec(c, "DELETE FROM queue.schema_version WHERE version > " + SchemaVersion.EXPECTED);
      WorkflowSql.start(c, "sql-stale", "fourth", null);
    } finally {
      SchemaVersion.clock = System::nanoTime;
    }
  }

  @Test
  void theCheckRemembersADatabaseByItsUrlWithoutTheQueryThatMayHoldAPassword() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    String secret = db.password() == null ? "x" : db.password();
    String url =
        db.jdbcUrl()
            + (db.jdbcUrl().contains("?") ? "&" : "?")
            + "user="
            + URLEncoder.encode(db.user(), StandardCharsets.UTF_8)
            + "&password="
            + URLEncoder.encode(secret, StandardCharsets.UTF_8);
    try (Connection c = DriverManager.getConnection(url)) {
      assertThat(SchemaVersion.key(c))
          .isEqualTo(db.jdbcUrl().replaceFirst("\\?.*", "") + " " + db.user())
          .doesNotContain("password=");
    }
  }

  private static String future(int version) {
    return "INSERT INTO queue.schema_version (version, file_name, checksum) VALUES ("
        + version
        + ", 'V"
        + version
        + "__future.sql', 'x')";
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
