package dev.pgworkflows.reliability;

import dev.pgworkflows.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A transaction left open in the workflows' database (a session that began, took a transaction id
 * and went idle) holds the horizon below which VACUUM may remove dead rows, so for as long as it
 * stays open nothing the queue and the runs leave behind is reclaimed. Under a steady load the runs
 * finish as fast and nearly as soon while it is open as before, and as before once it ends; every
 * acknowledged start completes once ({@link PressureCell}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("reliability")
class PinnedHorizonTest {

  @Test
  void aTransactionLeftOpenSlowsNothingAndLosesNothing(@TempDir Path dir) throws Exception {
    PressureCell.assertHeld(
        PressureCell.run(
            dir,
            "pinned horizon",
            Duration.ofSeconds(15),
            Duration.ofSeconds(40),
            Duration.ofSeconds(20),
            new PressureCell.Disturbance() {
              private Connection pin;

              @Override
              public void begin(PressureCell.Target target) throws Exception {
                TestDatabase db = target.db();
                pin = db.connect();
                pin.setAutoCommit(false);
                try (Statement s = pin.createStatement()) {
                  s.execute("SELECT txid_current()"); // holds an xid: the horizon stays here
                }
              }

              @Override
              public void end() throws Exception {
                pin.rollback();
                pin.close();
              }
            }));
  }
}
