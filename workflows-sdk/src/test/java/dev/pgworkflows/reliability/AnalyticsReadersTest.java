package dev.pgworkflows.reliability;

import dev.pgworkflows.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Analytics on the live database: four sessions scan the run table and the journal over and over,
 * each scan in a REPEATABLE READ transaction of its own (so each holds a snapshot, and the horizon,
 * while it reads). Under a steady load the runs finish as fast and nearly as soon as before, and
 * every acknowledged start completes once ({@link PressureCell}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("reliability")
class AnalyticsReadersTest {
  private static final int READERS = 4;

  @Test
  void fourRepeatableReadScannersSlowNothingAndLoseNothing(@TempDir Path dir) throws Exception {
    AtomicLong scans = new AtomicLong();
    PressureCell.assertHeld(
        PressureCell.run(
            dir,
            "four repeatable-read scanners",
            Duration.ofSeconds(20),
            Duration.ofSeconds(40),
            Duration.ofSeconds(20),
            new PressureCell.Disturbance() {
              private final AtomicBoolean reading = new AtomicBoolean(true);
              private final List<Thread> readers = new ArrayList<>();

              @Override
              public void begin(PressureCell.Target target) {
                TestDatabase db = target.db();
                for (int i = 0; i < READERS; i++) {
                  Thread t = new Thread(() -> scan(db), "analytics-" + i);
                  t.start();
                  readers.add(t);
                }
              }

              private void scan(TestDatabase db) {
                try (Connection c = db.connect()) {
                  c.setAutoCommit(false);
                  c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                  while (reading.get()) {
                    try (Statement s = c.createStatement();
                        ResultSet rs =
                            s.executeQuery(
                                "SELECT r.status, count(*), sum(length(s.output::text))"
                                    + " FROM queue.workflow_run r"
                                    + " JOIN queue.workflow_step s ON s.run_id = r.run_id"
                                    + " GROUP BY r.status")) {
                      while (rs.next()) {
                        rs.getLong(2);
                      }
                    }
                    c.commit();
                    scans.incrementAndGet();
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }

              @Override
              public void end() throws Exception {
                reading.set(false);
                for (Thread t : readers) {
                  t.join();
                }
                System.out.printf("four repeatable-read scanners: %d scans%n", scans.get());
              }
            }));
  }
}
