package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class MigratorTest {

  @Test
  void migratesABlankDatabaseAndReRunsAsANoOp() throws Exception {
    TestDatabase db = TestDatabase.blank();
    Migrator.Result first = new Migrator(db.dataSource()).migrate();
    assertThat(first.fromVersion()).isZero();
    assertThat(first.toVersion()).isEqualTo(Migrations.latestVersion());
    assertThat(first.applied()).contains("V001__queue.sql");

    Migrator.Result second = new Migrator(db.dataSource()).migrate();
    assertThat(second.applied()).isEmpty();
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
      for (Future<Migrator.Result> f : pool.invokeAll(tasks)) {
        appliedTotal += f.get().applied().size();
      }
      assertThat(appliedTotal).isEqualTo(Migrations.shipped().size());
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
    assertThatThrownBy(() -> new Migrator(db.dataSource(), migrations).migrate())
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
    assertThatThrownBy(() -> new Migrator(db.dataSource(), withBroken).migrate())
        .hasMessageContaining("__broken.sql failed");
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        var rs = s.executeQuery("SELECT to_regclass('queue.half_done') IS NULL")) {
      rs.next();
      assertThat(rs.getBoolean(1)).isTrue();
      assertThat(Migrator.currentVersion(c)).isEqualTo(Migrations.latestVersion());
    }
  }

  @Test
  void theIndexNamesEveryMigrationFile() throws IOException {
    Path dir = Path.of("migrations");
    List<String> files;
    try (Stream<Path> s = Files.list(dir)) {
      files =
          s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sql")).sorted().toList();
    }
    List<String> indexed = Migrations.shipped().stream().map(Migration::fileName).toList();
    assertThat(indexed).isEqualTo(files);
  }

  @Test
  void rejectsBadFileNames() {
    assertThatThrownBy(() -> Migration.of("V1_queue.sql", "select 1"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
