package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sixty runs of one concurrency key limited to three; the worker JVM holding the key's slots is
 * SIGKILLed mid-step. Another worker finishes every run once the dead worker's leases expire, never
 * more than three of the key run at once (seen by the workers, and as slots held in the database),
 * and no slot is left held.
 */
@Tag("reliability")
class KeyedWorkerKilledTest {
  private static final int RUNS = 60;

  /** A step's begin or end as a worker wrote it. */
  private record Event(boolean begin, int run, String who, long at) {}

  @Test
  void aKilledWorkersSlotsComeBackAndTheLimitHolds(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("steps.log");
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      List<Long> runs = new ArrayList<>();
      for (int i = 0; i < RUNS; i++) {
        runs.add(client.start(KeyedWorkflow.NAME, i, KeyedWorkflow.KEY).runId());
      }
      AtomicInteger mostSlots = new AtomicInteger();
      AtomicBoolean sampling = new AtomicBoolean(true);
      Thread sampler = new Thread(() -> sampleSlots(server, mostSlots, sampling));
      sampler.start();
      Process doomed =
          ChildJvm.start(
              KeyedWorkflow.class,
              dir.resolve("doomed.out"),
              Map.of(),
              server.url(),
              log.toString());
      long killedAt;
      try {
        Awaitility.await()
            .atMost(60, TimeUnit.SECONDS)
            .until(() -> count(log, "begin") - count(log, "end") == 3 && count(log, "end") >= 6);
        ChildJvm.kill(doomed);
        killedAt = System.currentTimeMillis();
      } finally {
        doomed.destroyForcibly();
      }
      Worker survivor =
          KeyedWorkflow.define(log, "survivor")
              .serve(
                  WorkerOptions.url(server.url())
                      .pollWait(Duration.ofSeconds(1))
                      .lease(Duration.ofSeconds(2))
                      .concurrency(8));
      try {
        for (long run : runs) {
          client.runs().awaitResult(KeyedWorkflow.NAME, run, Integer.class, Duration.ofSeconds(60));
        }
      } finally {
        survivor.close();
        sampling.set(false);
        sampler.join();
      }
      for (long run : runs) {
        assertThat(client.runs().get(KeyedWorkflow.NAME, run).status())
            .isEqualTo(RunStatus.COMPLETED);
        assertThat(client.runs().steps(KeyedWorkflow.NAME, run)).hasSize(1);
      }
      List<Event> events = events(log, killedAt);
      long firstAfterKill =
          events.stream()
              .filter(e -> e.begin() && e.who().equals("survivor"))
              .mapToLong(Event::at)
              .min()
              .orElseThrow();
      System.out.printf(
          "keyed worker killed: most in a step at once %d, most slots held %d, first survivor step"
              + " %d ms after the kill%n",
          mostAtOnce(events), mostSlots.get(), firstAfterKill - killedAt);
      assertThat(mostAtOnce(events)).as("runs of the key in a step at once").isBetween(2, 3);
      assertThat(mostSlots.get()).as("slots of the key held at once").isBetween(1, 3);
      Set<Integer> ended = new HashSet<>();
      events.stream().filter(e -> !e.begin()).forEach(e -> ended.add(e.run()));
      assertThat(ended).hasSize(RUNS);
      assertThat(firstAfterKill - killedAt)
          .as("the dead worker's slots came back within its lease and a poll")
          .isLessThan(10_000);
      try (Connection c = server.database().connect();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT count(*) FILTER (WHERE slot_held),"
                      + " (SELECT count(*) FROM queue.concurrency_wait)"
                      + " FROM queue.workflow_run WHERE workflow_name = '"
                      + KeyedWorkflow.NAME
                      + "'")) {
        rs.next();
        assertThat(rs.getLong(1)).as("slots left held").isZero();
        assertThat(rs.getLong(2)).as("runs left waiting").isZero();
      }
    }
  }

  private static long count(Path log, String kind) throws Exception {
    if (!Files.exists(log)) {
      return 0;
    }
    return Files.readAllLines(log).stream().filter(l -> l.startsWith(kind + " ")).count();
  }

  /**
   * The log's events in time order, an end before a begin of the same millisecond (a slot is taken
   * again only after the completion that freed it); the killed worker's unfinished steps end when
   * it was killed.
   */
  private static List<Event> events(Path log, long killedAt) throws Exception {
    List<Event> out = new ArrayList<>();
    Set<String> open = new HashSet<>();
    for (String line : Files.readAllLines(log)) {
      String[] f = line.split(" ");
      Event e = new Event(f[0].equals("begin"), Integer.parseInt(f[1]), f[2], Long.parseLong(f[3]));
      out.add(e);
      String id = e.run() + "/" + e.who();
      if (e.begin()) {
        open.add(id);
      } else {
        open.remove(id);
      }
    }
    for (String id : open) {
      String[] f = id.split("/");
      out.add(new Event(false, Integer.parseInt(f[0]), f[1], killedAt));
    }
    out.sort(Comparator.comparingLong(Event::at).thenComparing(e -> e.begin()));
    return out;
  }

  private static int mostAtOnce(List<Event> events) {
    int now = 0;
    int most = 0;
    for (Event e : events) {
      now += e.begin() ? 1 : -1;
      most = Math.max(most, now);
    }
    return most;
  }

  /** Samples the slots of the key held in the database every few milliseconds. */
  private static void sampleSlots(TestServer server, AtomicInteger most, AtomicBoolean sampling) {
    try (Connection c = server.database().connect();
        Statement s = c.createStatement()) {
      while (sampling.get()) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = '"
                    + KeyedWorkflow.NAME
                    + "' AND concurrency_key = 'tenant' AND slot_held")) {
          rs.next();
          most.accumulateAndGet(rs.getInt(1), Math::max);
        }
        Thread.sleep(5);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
