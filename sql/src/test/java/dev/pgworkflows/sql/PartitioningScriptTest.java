package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.pgworkflows.testing.PostgresServer;
import dev.pgworkflows.testing.Psql;
import dev.pgworkflows.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code bench/scripts/partitioning.sh}, which docs/scaling.md's retention and partitioning figures
 * come from, runs as printed there: with the connection in the PG* variables, here on 1,000 runs
 * instead of ten million (it needs psql: skipped where it is not installed; CI installs it).
 */
class PartitioningScriptTest {

  @Test
  void theScriptMeasuresBothLayoutsAndLeavesNothingBehind() throws Exception {
    assumeTrue(Psql.installed(), "psql is not on the PATH");
    PostgresServer pg = PostgresServer.get();
    TestDatabase db = TestDatabase.blank();
    ProcessBuilder pb =
        new ProcessBuilder("bash", "../bench/scripts/partitioning.sh", "1000")
            .redirectErrorStream(true);
    pb.environment().put("PGHOST", pg.host());
    pb.environment().put("PGPORT", Integer.toString(pg.port()));
    pb.environment().put("PGUSER", db.user());
    pb.environment().put("PGPASSWORD", db.password() == null ? "" : db.password());
    pb.environment().put("PGDATABASE", db.name());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(150, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("partitioning.sh: %s", out).isZero();
    assertThat(out)
        .contains("plain: sweeper DELETE of the oldest 10%, all batches")
        .contains("plain: idle sweeper pass (nothing due), current function")
        .contains("partitioned: DETACH run_part_p00 CONCURRENTLY")
        .contains("partitioned: DROP TABLE run_part_p00, step_part_p00")
        .contains("Index Cond: (expires_at <");
    try (var c = db.connect();
        var s = c.createStatement();
        var rs = s.executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname = 'partbench'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("schema partbench left behind").isZero();
    }
  }
}
