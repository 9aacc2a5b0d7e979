package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The database's disk fills up under a steady load and stays full for 20 s: PostgreSQL has its own
 * small filesystem (a 256 MB tmpfs), and another file takes every byte left on it. Starts are
 * refused only with an answer the client may retry (503) while it lasts, nothing acknowledged is
 * lost, and service resumes once the file is deleted. PostgreSQL stops when it cannot write its
 * log; where it did, the test starts it again as a service manager would ({@link PressureCell}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("reliability")
class DiskFullTest {
  /** A start is served again this soon after the space is freed (PostgreSQL's restart included). */
  private static final long RECOVERED_WITHIN_MS = 20_000;

  /** What the after phase's start-to-end p99 may exceed the before phase's by. */
  private static final long AFTER_P99_ALLOWANCE_MS = 2_000;

  @Test
  void aFullDiskRefusesRetryablyLosesNothingAndServiceResumesWhenSpaceIsFreed(@TempDir Path dir)
      throws Exception {
    AtomicLong filled = new AtomicLong();
    AtomicInteger restarts = new AtomicInteger();
    try (SmallDisk disk = SmallDisk.mount(256);
        RestartablePostgres pg = RestartablePostgres.start(disk.path().resolve("data"))) {
      TestDatabase db = new TestDatabase("postgres", pg.jdbcUrl(), "postgres", "postgres");
      PressureCell.Result r =
          PressureCell.run(
              dir,
              "the database's disk full",
              db,
              Duration.ofSeconds(15),
              Duration.ofSeconds(20),
              Duration.ofSeconds(30),
              new PressureCell.Disturbance() {
                @Override
                public void begin(PressureCell.Target target) throws Exception {
                  filled.set(disk.fill());
                }

                @Override
                public void end() throws Exception {
                  disk.free();
                  if (!pg.isUp()) {
                    restarts.incrementAndGet();
                    pg.startAgain();
                  }
                }
              });
      System.out.printf(
          "the database's disk full: %d MB written to fill it; PostgreSQL started again %d"
              + " times%n",
          filled.get() >> 20, restarts.get());
      assertThat(filled.get()).as("bytes it took to fill the disk").isGreaterThan(0);
      assertThat(r.refusals()).as("starts refused while the disk was full").isNotEmpty();
      assertThat(SteadyStarts.onlyRetryable(r.refusals())).as("refused: %s", r.refusals()).isTrue();
      assertThat(r.refusedAfterMs())
          .as("a start was refused this long after the space was freed")
          .isLessThan(RECOVERED_WITHIN_MS);
      // The runs started just after the space came back wait behind those acknowledged while the
      // disk was full, which could not journal a step until then (p99 335 to 720 ms against 120).
      PressureCell.Phase before = r.phase("before");
      PressureCell.Phase after = r.phase("after");
      assertThat(after.p99Ms()).isLessThan(before.p99Ms() + AFTER_P99_ALLOWANCE_MS);
    }
  }
}
