package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every session of the server in the workflows' database (its pool, its LISTEN connection, its hold
 * on the background jobs) is ended by {@code pg_terminate_backend} twice a second for 30 s under a
 * steady load. Starts may be refused meanwhile, but only with an answer the client may retry (503,
 * or the SDK's retryable {@code WorkflowException}); every acknowledged start completes once, and
 * the server serves as before from two seconds after the terminations stop ({@link PressureCell}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("reliability")
class TerminatedConnectionsTest {
  /** How long after the last termination the phase after begins. */
  private static final long RECOVERY_MS = 2_000;

  @Test
  void sessionsKilledTwiceASecondRefuseOnlyRetryablyAndLoseNothing(@TempDir Path dir)
      throws Exception {
    AtomicLong terminated = new AtomicLong();
    PressureCell.Result r =
        PressureCell.run(
            dir,
            "sessions terminated twice a second",
            Duration.ofSeconds(15),
            Duration.ofSeconds(30),
            Duration.ofSeconds(20),
            new PressureCell.Disturbance() {
              private final AtomicBoolean killing = new AtomicBoolean(true);
              private Thread killer;

              @Override
              public void begin(PressureCell.Target target) {
                TestDatabase db = target.db();
                killer = new Thread(() -> kill(db), "terminator");
                killer.start();
              }

              private void kill(TestDatabase db) {
                try (Connection c = db.connect();
                    Statement s = c.createStatement()) {
                  while (killing.get()) {
                    try (ResultSet rs =
                        s.executeQuery(
                            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                + " WHERE datname = current_database()"
                                + " AND pid <> pg_backend_pid()"
                                + " AND backend_type = 'client backend'"
                                + " AND application_name <> '"
                                + PressureCell.APPLICATION_NAME
                                + "'")) {
                      rs.next();
                      terminated.addAndGet(rs.getLong(1));
                    }
                    Thread.sleep(500);
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }

              @Override
              public void end() throws Exception {
                killing.set(false);
                killer.join();
                System.out.printf(
                    "sessions terminated twice a second: %d sessions ended%n", terminated.get());
                // The phase after measures the server once it has its sessions back: the pool's
                // replacements for the last sessions ended, and the runs their retries held back,
                // still count as the disturbance's.
                Thread.sleep(RECOVERY_MS);
              }
            });
    assertThat(terminated.get()).as("sessions ended").isGreaterThan(30);
    assertThat(SteadyStarts.onlyRetryable(r.refusals())).as("refused: %s", r.refusals()).isTrue();
    PressureCell.Phase before = r.phases().get(0);
    PressureCell.Phase after = r.phases().get(2);
    assertThat(after.perSecond()).isGreaterThan(before.perSecond() * 0.9);
    assertThat(after.p99Ms()).isLessThan(Math.max(2 * before.p99Ms(), before.p99Ms() + 500));
  }
}
