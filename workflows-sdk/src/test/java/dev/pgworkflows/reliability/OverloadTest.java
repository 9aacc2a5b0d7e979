package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One and a half times the load the cell sustains, for a minute. What it sustains is measured
 * first, in the same cell: a burst of 3,000 starts made as fast as 64 callers can, and the runs
 * that complete a second while a backlog remains. The overload then starts runs at 1.5 times that
 * rate for 60 s: no start is refused, every acknowledged run completes once, and the backlog is
 * gone by the end of the 45 s after ({@link PressureCell}).
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@Tag("reliability")
class OverloadTest {
  private static final int BURST = 3_000;

  @Test
  void oneAndAHalfTimesTheSustainableLoadForAMinuteDrainsWithoutErrors(@TempDir Path dir)
      throws Exception {
    double[] sustained = new double[1];
    PressureCell.Result r =
        PressureCell.run(
            dir,
            "1.5 times the sustainable load for a minute",
            Duration.ofSeconds(10),
            Duration.ofSeconds(60),
            Duration.ofSeconds(45),
            new PressureCell.Disturbance() {
              @Override
              public void prepare(PressureCell.Target t) throws Exception {
                long runs0 = count(t.db(), "true");
                t.startsPerSecond().set(10_000); // as fast as the callers go
                while (count(t.db(), "true") < runs0 + BURST) {
                  Thread.sleep(20);
                }
                t.startsPerSecond().set(PressureCell.STEADY_STARTS_PER_SECOND);
                long done0 = count(t.db(), "status = 'completed'");
                long t0 = System.nanoTime();
                long done1;
                do {
                  Thread.sleep(100);
                  done1 = count(t.db(), "status = 'completed'");
                } while (count(t.db(), "status = 'running'") > 200);
                sustained[0] = (done1 - done0) / ((System.nanoTime() - t0) / 1e9);
                while (count(t.db(), "status = 'running'") > 20) {
                  Thread.sleep(100); // the rest of the backlog
                }
                System.out.printf(
                    "1.5 times the sustainable load: %.0f runs/s sustained with a backlog%n",
                    sustained[0]);
              }

              private PressureCell.Target target;

              @Override
              public void begin(PressureCell.Target t) {
                target = t;
                t.startsPerSecond().set((int) Math.round(sustained[0] * 1.5));
              }

              @Override
              public void end() {
                target.startsPerSecond().set(PressureCell.STEADY_STARTS_PER_SECOND);
              }
            });
    assertThat(sustained[0]).as("runs a second sustained").isGreaterThan(50);
    assertThat(r.refusals()).as("refused starts").isEmpty();
    PressureCell.Phase during = r.phase("during");
    assertThat(during.perSecond())
        .as("starts a second during the overload")
        .isGreaterThan(sustained[0] * 1.3);
    assertThat(r.drainMs()).as("the backlog's tail after the minute after").isLessThan(10_000);
  }

  private static long count(TestDatabase db, String where) throws Exception {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM queue.workflow_run WHERE " + where)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
