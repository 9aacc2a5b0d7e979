package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class MigratorTest {

  @Test
  void migratesABlankDatabaseAndReRunsAsANoOp() throws Exception {
    TestDatabase db = TestDatabase.blank();
    Migrator.Result first = new Migrator(db.dataSource()).migrate();
    assertThat(first.fromVersion()).isZero();
    assertThat(first.toVersion()).isEqualTo(Migrations.latestVersion());
    assertThat(first.applied()).contains("V001__baseline.sql");
    assertThat(first.functionFilesApplied())
        .isEqualTo(FunctionFile.shipped().stream().map(FunctionFile::fileName).toList());
    assertThat(first.functionsDropped()).isEmpty();

    Migrator.Result second = new Migrator(db.dataSource()).migrate();
    assertThat(second.applied()).isEmpty();
    assertThat(second.functionFilesApplied()).isEmpty();
    assertThat(second.fromVersion()).isEqualTo(Migrations.latestVersion());
    try (Connection c = db.connect()) {
      assertThat(Migrator.currentVersion(c)).isEqualTo(Migrations.latestVersion());
    }
  }

  @Test
  void twoProcessesStartingAtOnceApplyEachMigrationOnce() throws Exception {
    TestDatabase db = TestDatabase.blank();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<Migrator.Result>> tasks = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        tasks.add(() -> new Migrator(db.dataSource()).migrate());
      }
      int appliedTotal = 0;
      int functionRuns = 0;
      for (Future<Migrator.Result> f : pool.invokeAll(tasks)) {
        appliedTotal += f.get().applied().size();
        functionRuns += f.get().functionFilesApplied().isEmpty() ? 0 : 1;
      }
      assertThat(appliedTotal).isEqualTo(Migrations.shipped().size());
      assertThat(functionRuns).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refusesADatabaseNewerThanTheCode() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    int latest = Migrations.latestVersion();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO queue.schema_version (version, file_name, checksum) VALUES ("
              + (latest + 1)
              + ", 'V999__future.sql', 'x')");
    }
    assertThatThrownBy(() -> new Migrator(db.dataSource()).migrate())
        .isInstanceOf(SchemaTooNewException.class)
        .hasMessageContaining("version " + (latest + 1))
        .hasMessageContaining("version " + latest);
  }

  @Test
  void refusesAnEditedReleasedMigration() {
    TestDatabase db = TestDatabase.fresh();
    List<Migration> migrations = new ArrayList<>(Migrations.shipped());
    Migration original = migrations.get(0);
    migrations.set(0, Migration.of(original.fileName(), original.sql() + "\n-- edited\n"));
    assertThatThrownBy(
            () -> new Migrator(db.dataSource(), migrations, FunctionFile.shipped()).migrate())
        .hasMessageContaining("was edited after it was applied");
  }

  @Test
  void aFailingMigrationLeavesNoTrace() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    List<Migration> withBroken = new ArrayList<>(Migrations.shipped());
    withBroken.add(
        new Migration(
            withBroken.size() + 1,
            "V" + (withBroken.size() + 1) + "__broken.sql",
            "CREATE TABLE queue.half_done (x int); SELECT no_such_function();"));
    assertThatThrownBy(
            () -> new Migrator(db.dataSource(), withBroken, FunctionFile.shipped()).migrate())
        .hasMessageContaining("__broken.sql failed");
    try (Connection c = db.connect()) {
      assertThat(scalar(c, "SELECT to_regclass('queue.half_done') IS NULL")).isEqualTo("t");
      assertThat(Migrator.currentVersion(c)).isEqualTo(Migrations.latestVersion());
    }
  }

  @Test
  void aMigrationPostgresAbortsForADeadlockIsMadeAgainAndApplied() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE public.first_t (x int); CREATE TABLE public.second_t (x int)");
    }
    List<Migration> withAlters = new ArrayList<>(Migrations.shipped());
    int version = withAlters.size() + 1;
    String name = "V" + version + "__alters_both.sql";
    withAlters.add(
        new Migration(
            version,
            name,
            "ALTER TABLE public.first_t ADD COLUMN y int;"
                + " ALTER TABLE public.second_t ADD COLUMN y int;"));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection other = db.connect();
        Statement otherSql = other.createStatement()) {
      // Another session writes second_t, then wants first_t, which the migration holds while it
      // waits for second_t: a deadlock, which PostgreSQL ends by aborting the migration (it has
      // waited longest, so its deadlock check runs first).
      other.setAutoCommit(false);
      otherSql.execute("LOCK TABLE public.second_t IN ROW EXCLUSIVE MODE");
      Future<Migrator.Result> migration =
          pool.submit(
              () -> new Migrator(db.dataSource(), withAlters, FunctionFile.shipped()).migrate());
      awaitALockWaitOn(db, "second_t");
      otherSql.execute("LOCK TABLE public.first_t IN ROW EXCLUSIVE MODE");
      other.commit();
      Migrator.Result result = migration.get(60, TimeUnit.SECONDS);
      assertThat(result.applied()).containsExactly(name);
    } finally {
      pool.shutdownNow();
    }
    try (Connection c = db.connect()) {
      assertThat(Migrator.currentVersion(c)).isEqualTo(version);
      assertThat(
              scalar(
                  c,
                  "SELECT count(*) FROM information_schema.columns"
                      + " WHERE table_schema = 'public' AND column_name = 'y'"))
          .isEqualTo("2");
    }
  }

  private static void awaitALockWaitOn(TestDatabase db, String table) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try (Connection c = db.connect()) {
      while (!scalar(
              c,
              "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'public."
                  + table
                  + "'::regclass")
          .equals("1")) {
        assertThat(System.nanoTime()).as("a session waits for %s", table).isLessThan(deadline);
        Thread.sleep(10);
      }
    }
  }

  @Test
  void aChangedFunctionFileIsAppliedAgain() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    List<FunctionFile> files = new ArrayList<>(FunctionFile.shipped());
    int at = indexOf(files, "workflow_read.sql");
    FunctionFile read = files.get(at);
    files.set(
        at,
        new FunctionFile(
            read.fileName(),
            read.sql()
                + "\n-- Added for the test.\n"
                + "CREATE OR REPLACE FUNCTION queue.workflow_answer() RETURNS int\n"
                + " LANGUAGE sql IMMUTABLE AS $$ SELECT 42 $$;\n"));
    Migrator.Result result = new Migrator(db.dataSource(), Migrations.shipped(), files).migrate();
    assertThat(result.applied()).isEmpty();
    assertThat(result.functionFilesApplied()).contains("workflow_read.sql");
    try (Connection c = db.connect()) {
      assertThat(scalar(c, "SELECT queue.workflow_answer()")).isEqualTo("42");
      assertThat(
              scalar(
                  c,
                  "SELECT checksum FROM queue.function_file WHERE file_name = 'workflow_read.sql'"))
          .isEqualTo(files.get(at).checksum());
    }
  }

  @Test
  void aFunctionNoFileDefinesIsDropped() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE FUNCTION queue.left_behind(p int) RETURNS int LANGUAGE sql AS 'SELECT p'");
      // A changed checksum is what makes the Migrator look at the functions again.
      s.execute("UPDATE queue.function_file SET checksum = 'old' WHERE file_name = 'common.sql'");
    }
    Migrator.Result result = new Migrator(db.dataSource()).migrate();
    assertThat(result.functionsDropped()).containsExactly("queue.left_behind(integer)");
    try (Connection c = db.connect()) {
      assertThat(scalar(c, "SELECT to_regprocedure('queue.left_behind(int)') IS NULL"))
          .isEqualTo("t");
      assertThat(
              scalar(
                  c,
                  "SELECT to_regprocedure('queue.send(text, jsonb, jsonb, int, text,"
                      + " timestamptz, timestamptz)') IS NOT NULL"))
          .isEqualTo("t");
    }
  }

  @Test
  void aBrokenFunctionFileLeavesNoTrace() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    List<FunctionFile> files = new ArrayList<>(FunctionFile.shipped());
    files.add(
        new FunctionFile(
            "broken.sql",
            "CREATE OR REPLACE FUNCTION queue.fine() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n"
                + "CREATE OR REPLACE FUNCTION queue.broken() RETURNS int LANGUAGE sql"
                + " AS $$ SELECT no_such_column FROM queue.queue_meta $$;\n"));
    assertThatThrownBy(() -> new Migrator(db.dataSource(), Migrations.shipped(), files).migrate())
        .hasMessageContaining("function file broken.sql failed")
        .hasMessageContaining("no_such_column");
    try (Connection c = db.connect()) {
      assertThat(scalar(c, "SELECT to_regprocedure('queue.fine()') IS NULL")).isEqualTo("t");
      assertThat(
              scalar(c, "SELECT count(*) FROM queue.function_file WHERE file_name = 'broken.sql'"))
          .isEqualTo("0");
    }
  }

  @Test
  void theIndexesNameEverySchemaAndFunctionFile() throws IOException {
    assertThat(Migrations.shipped().stream().map(Migration::fileName).toList())
        .isEqualTo(sqlFilesIn(Path.of("schema")));
    assertThat(FunctionFile.shipped().stream().map(FunctionFile::fileName).sorted().toList())
        .isEqualTo(sqlFilesIn(Path.of("functions")));
  }

  @Test
  void rejectsBadFileNames() {
    assertThatThrownBy(() -> Migration.of("V1_queue.sql", "select 1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new FunctionFile("Queue Functions.sql", "select 1"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static List<String> sqlFilesIn(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".sql"))
          .sorted()
          .toList();
    }
  }

  private static int indexOf(List<FunctionFile> files, String name) {
    for (int i = 0; i < files.size(); i++) {
      if (files.get(i).fileName().equals(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException(name);
  }

  static String scalar(Connection c, String sql) throws Exception {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
