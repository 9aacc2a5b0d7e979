package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.MigratorTest.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A database made by the pre-release migration series (version rows V001__queue.sql to
 * V032__completion_batch_fewer_statements.sql, no function bookkeeping). At version 32 its schema
 * is the baseline's, so the database is built here from the baseline and then given the pre-release
 * bookkeeping, an outdated function body and a function the files no longer define.
 */
class PreReleaseDatabaseTest {

  @Test
  void aDatabaseAtTheSeriesLastVersionIsAdoptedWithItsData() throws Exception {
    TestDatabase db = baselineOnly();
    try (Connection c = db.connect()) {
      QueueSql queue = new QueueSql(c);
      queue.create("orders", true, 30, null);
      long sent = queue.send("orders", "{\"order\": 7}", null, 0, "customer-1");
      makePreRelease(c, PreReleaseSchema.LAST_VERSION);

      Migrator.Result result = new Migrator(db.dataSource()).migrate();

      assertThat(result.applied()).containsExactlyElementsOf(afterBaseline());
      assertThat(result.functionFilesApplied()).isNotEmpty();
      assertThat(result.functionsDropped()).containsExactly("queue.prerelease_only()");
      assertThat(
              scalar(
                  c,
                  "SELECT string_agg(version || ' ' || file_name, ',' ORDER BY version)"
                      + " FROM queue.schema_version"))
          .isEqualTo(
              Migrations.shipped().stream()
                  .map(m -> m.version() + " " + m.fileName())
                  .collect(Collectors.joining(",")));
      assertThat(scalar(c, "SELECT queue.receipt_of(timestamptz 'epoch' + interval '1 second')"))
          .isEqualTo("1000000");
      List<QueueSql.Msg> got = queue.receive("orders", 10, 30, null, null);
      assertThat(got).extracting(QueueSql.Msg::id).containsExactly(sent);
      assertThat(got.get(0).body()).isEqualTo("{\"order\": 7}");
    }
    assertThat(new Migrator(db.dataSource()).migrate().functionFilesApplied()).isEmpty();
  }

  @Test
  void aDatabaseAtAnEarlierVersionOfTheSeriesIsRefusedWithWhatToDo() throws Exception {
    TestDatabase db = baselineOnly();
    try (Connection c = db.connect()) {
      makePreRelease(c, 20);
      assertThatThrownBy(() -> new Migrator(db.dataSource()).migrate())
          .hasMessageContaining("version 20 of the pre-release migration series")
          .hasMessageContaining("bring it to version 32");
      assertThat(scalar(c, "SELECT max(version) FROM queue.schema_version")).isEqualTo("20");
      assertThat(scalar(c, "SELECT to_regprocedure('queue.prerelease_only()') IS NOT NULL"))
          .isEqualTo("t");
    }
  }

  /** The shipped migrations after the baseline, which an adopted database still needs. */
  private static List<String> afterBaseline() {
    return Migrations.shipped().stream().skip(1).map(Migration::fileName).toList();
  }

  /**
   * The baseline schema and the function files that fit it, without the Migrator's bookkeeping. A
   * file that needs a later migration's tables fails and is left out, as it did not exist then.
   */
  private static TestDatabase baselineOnly() throws Exception {
    TestDatabase db = TestDatabase.blank();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.execute(Migrations.shipped().get(0).sql());
      for (FunctionFile f : FunctionFile.shipped()) {
        var before = c.setSavepoint();
        try {
          s.execute(f.sql());
        } catch (java.sql.SQLException e) {
          c.rollback(before);
        }
      }
      s.execute(
          "CREATE TABLE queue.schema_version (version int PRIMARY KEY, file_name text NOT NULL,"
              + " checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
      c.commit();
    }
    return db;
  }

  private static void makePreRelease(Connection c, int version) throws Exception {
    try (Statement s = c.createStatement()) {
      s.execute(
          "CREATE OR REPLACE FUNCTION queue.receipt_of(p_vt timestamptz) RETURNS bigint"
              + " LANGUAGE sql IMMUTABLE AS $$ SELECT 0::bigint $$");
      s.execute("CREATE FUNCTION queue.prerelease_only() RETURNS int LANGUAGE sql AS 'SELECT 1'");
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO queue.schema_version (version, file_name, checksum) VALUES (?, ?, 'x')")) {
      for (int v = 1; v <= version; v++) {
        ps.setInt(1, v);
        ps.setString(
            2,
            v == 1
                ? PreReleaseSchema.FIRST_FILE
                : v == PreReleaseSchema.LAST_VERSION
                    ? PreReleaseSchema.LAST_FILE
                    : String.format("V%03d__pre_release.sql", v));
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }
}
