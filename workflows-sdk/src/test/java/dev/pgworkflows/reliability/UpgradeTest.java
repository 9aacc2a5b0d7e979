package dev.pgworkflows.reliability;

import static dev.pgworkflows.reliability.UpgradeWorkflows.DELAYED;
import static dev.pgworkflows.reliability.UpgradeWorkflows.IN_STEP;
import static dev.pgworkflows.reliability.UpgradeWorkflows.KEYED;
import static dev.pgworkflows.reliability.UpgradeWorkflows.PAUSED;
import static dev.pgworkflows.reliability.UpgradeWorkflows.RETRYING;
import static dev.pgworkflows.reliability.UpgradeWorkflows.SCHEDULED;
import static dev.pgworkflows.reliability.UpgradeWorkflows.SIGNALLED;
import static dev.pgworkflows.reliability.UpgradeWorkflows.SLEEPING;
import static dev.pgworkflows.reliability.UpgradeWorkflows.STREAMING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.Schedule;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * For each earlier release: its server makes the database (its schema) and takes runs into every
 * state a run can wait in — asleep, waiting for a signal, retrying a failing step, queued behind a
 * concurrency key, started with a delay, due from a schedule, paused, half-way through its stream,
 * inside a step — then is stopped (SIGTERM) and this build's server is started on the same database
 * and port. Every run then finishes as it would have had no upgrade happened: same answers, each
 * step journaled once, the keyed runs in their order, the stream whole.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@Tag("reliability")
class UpgradeTest {
  private static final Duration AWAIT = Duration.ofSeconds(90);

  static List<Releases.Release> releases() throws Exception {
    return Releases.all();
  }

  @ParameterizedTest(name = "from {0}")
  @MethodSource("releases")
  void runsInFlightFinishAsTheyWouldHaveAfterTheUpgrade(Releases.Release release, @TempDir Path dir)
      throws Exception {
    Path jar = Releases.serverJar(release);
    TestDatabase db = TestDatabase.blank();
    int port = ServerJvms.freePort();
    String url = "http://localhost:" + port;
    Map<String, String> env = ServerJvms.env(db, port);
    Process server = ServerJvms.release(jar, dir.resolve("release.out"), env);
    List<Worker> workers = new ArrayList<>();
    try {
      ChildJvm.awaitReady(url, dir.resolve("release.out"));
      for (Workflow<?, ?> w : UpgradeWorkflows.ALL) {
        workers.add(w.serve(WorkerOptions.url(url).pollWait(Duration.ofSeconds(1))));
      }
      WorkflowClient client = WorkflowClient.connect(url);
      long inStep = client.start(IN_STEP, "i").runId();
      long sleeping = client.start(SLEEPING, "s").runId();
      long signalled = client.start(SIGNALLED, "g").runId();
      long retrying = client.start(RETRYING, Instant.now().plusSeconds(15).toEpochMilli()).runId();
      List<Long> keyed = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        keyed.add(
            client
                .start(KEYED, "k" + i, StartOptions.builder().concurrencyKey("tenant").build())
                .runId());
      }
      long delayed =
          client
              .start(DELAYED, "d", StartOptions.builder().delay(Duration.ofSeconds(20)).build())
              .runId();
      long paused = client.start(PAUSED, "p").runId();
      long streaming = client.start(STREAMING, "m").runId();
      client
          .schedules()
          .create(SCHEDULED.name(), Schedule.cron("* * * * *").name("up-every-minute"));

      // The states, reached under the release's server.
      await("the paused run's first step", () -> journaled(client, PAUSED, paused, "before"));
      assertThat(client.runs().pause(PAUSED.name(), paused).paused()).isTrue();
      await("the sleeping run's first step", () -> journaled(client, SLEEPING, sleeping, "before"));
      await("the stream's first step", () -> journaled(client, STREAMING, streaming, "first"));
      await(
          "the first keyed run waiting",
          () -> client.runs().get(KEYED.name(), keyed.get(0)).waitingFor() != null);
      assertThat(journaled(client, IN_STEP, inStep, "slow"))
          .as("the slow step, still running")
          .isFalse();
      assertThat(client.runs().get(DELAYED.name(), delayed).status()).isEqualTo(RunStatus.RUNNING);

      Instant upgradeBegan = Instant.now();
      ServerJvms.stop(server);
      server = ServerJvms.current(dir.resolve("current.out"), env);
      ChildJvm.awaitReady(url, dir.resolve("current.out"));
      System.out.printf(
          "upgrade from %s: the server was away for %d ms%n",
          release, Duration.between(upgradeBegan, Instant.now()).toMillis());

      Instant upgraded = Instant.now();
      // What needs no one finishes by itself.
      assertThat(client.runs().awaitResult(IN_STEP.name(), inStep, String.class, AWAIT))
          .isEqualTo("i-done");
      assertThat(client.runs().awaitResult(SLEEPING.name(), sleeping, String.class, AWAIT))
          .isEqualTo("s-a-slept");
      assertThat(client.runs().awaitResult(RETRYING.name(), retrying, String.class, AWAIT))
          .isEqualTo("recovered");
      assertThat(client.runs().awaitResult(DELAYED.name(), delayed, String.class, AWAIT))
          .isEqualTo("d-ran");
      // The paused run stays paused past its sleep, then resumes when told.
      RunInfo stillPaused = client.runs().get(PAUSED.name(), paused);
      assertThat(stillPaused.paused()).isTrue();
      assertThat(journaled(client, PAUSED, paused, "after")).isFalse();
      client.runs().resume(PAUSED.name(), paused);
      assertThat(client.runs().awaitResult(PAUSED.name(), paused, String.class, AWAIT))
          .isEqualTo("p-a-resumed");
      // Signals sent to the new server reach the runs that waited under the old one.
      client.signal(SIGNALLED.name(), signalled, "go", "yes");
      assertThat(client.runs().awaitResult(SIGNALLED.name(), signalled, String.class, AWAIT))
          .isEqualTo("g-yes");
      for (long id : keyed) {
        client.signal(KEYED.name(), id, "go", "yes");
      }
      for (int i = 0; i < keyed.size(); i++) {
        assertThat(client.runs().awaitResult(KEYED.name(), keyed.get(i), String.class, AWAIT))
            .isEqualTo("k" + i + "-yes");
      }
      List<Instant> keyedEnds = new ArrayList<>();
      for (long id : keyed) {
        keyedEnds.add(client.runs().get(KEYED.name(), id).completedAt());
      }
      assertThat(keyedEnds).as("the keyed runs, in the order they were started").isSorted();
      client.signal(STREAMING.name(), streaming, "more", "please");
      assertThat(client.runs().awaitResult(STREAMING.name(), streaming, String.class, AWAIT))
          .isEqualTo("m-streamed");
      assertThat(
              client.runs().stream(STREAMING.name(), streaming, "progress", Integer.class)
                  .values()
                  .toList())
          .containsExactly(1, 2, 3);

      // The schedule made under the old server ticks under the new one.
      await(
          "a scheduled run started after the upgrade",
          Duration.ofSeconds(75),
          () ->
              client.runs().list(SCHEDULED.name(), RunStatus.COMPLETED, null, 10).runs().stream()
                  .anyMatch(
                      run ->
                          run.startedAt().isAfter(upgraded)
                              && "\"ticked\"".equals(run.output().toString())));

      // Each step once.
      assertThat(steps(client, IN_STEP, inStep)).isEqualTo("slow");
      assertThat(steps(client, SLEEPING, sleeping)).isEqualTo("before,nap,after");
      assertThat(steps(client, PAUSED, paused)).isEqualTo("before,nap,after");
      assertThat(steps(client, STREAMING, streaming)).isEqualTo("first,more,second");
      StepInfo flaky = client.runs().steps(RETRYING.name(), retrying).get(0);
      assertThat(flaky.attempts()).as("attempts of the flaky step").isGreaterThan(1);
    } finally {
      for (Worker w : workers) {
        w.close();
      }
      ChildJvm.kill(server);
    }
  }

  private static boolean journaled(
      WorkflowClient client, Workflow<?, ?> w, long runId, String step) {
    return client.runs().steps(w.name(), runId).stream().anyMatch(s -> s.name().equals(step));
  }

  private static String steps(WorkflowClient client, Workflow<?, ?> w, long runId) {
    return client.runs().steps(w.name(), runId).stream()
        .map(StepInfo::name)
        .collect(Collectors.joining(","));
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    await(what, Duration.ofSeconds(60), done);
  }

  private static void await(String what, Duration within, BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for %s", what).isLessThan(deadline);
      Thread.sleep(100);
    }
  }
}
