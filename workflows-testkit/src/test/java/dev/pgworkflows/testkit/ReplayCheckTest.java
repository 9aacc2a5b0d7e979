package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pgworkflows.workflows.Branch;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReplayCheck} against journals of real runs left in flight on a kit's server: one waiting
 * for an event, one sleeping. Each check replays them through a changed body, whose steps count
 * every time one runs (none may).
 */
class ReplayCheckTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NAME = "replayed-order";

  /** How a version of the order workflow differs from the one whose runs are in flight. */
  enum Change {
    NONE,
    REORDERED,
    RENAMED,
    VALUES_SWAPPED,
    STEP_ADDED_AT_THE_END,
    STEP_ADDED_BEFORE_THE_WAIT,
    PATCHED_BEFORE_THE_WAIT,
    NEW_VERSION
  }

  @TempDir static Path exports;
  static long waiting;
  static long sleeping;

  private final AtomicInteger ran = new AtomicInteger();
  private final List<Instant> nows = new CopyOnWriteArrayList<>();

  static Workflow<String, String> order(Change change, AtomicInteger ran, List<Instant> nows) {
    return Workflow.define(NAME, String.class, String.class)
        .version(change == Change.NEW_VERSION ? 2 : 1)
        .run(
            (ctx, in) -> {
              StepContext s = ctx.step();
              if (change == Change.REORDERED) {
                s.run("reserve", String.class, () -> counted(ran, "reserved"));
              }
              String charged = s.run("charge", String.class, () -> counted(ran, "charged-" + in));
              if (change == Change.VALUES_SWAPPED) {
                ctx.randomUUID();
                nows.add(ctx.now());
              } else {
                nows.add(ctx.now());
                ctx.randomUUID();
              }
              int shard = ctx.random().nextInt(16);
              List<String> packed =
                  s.parallel(
                      List.of(
                          Branch.of("pack-a", String.class, () -> counted(ran, "a")),
                          Branch.of("pack-b", String.class, () -> counted(ran, "b"))));
              if (change == Change.RENAMED) {
                s.run("hold-stock", String.class, () -> counted(ran, "held"));
              } else if (change != Change.REORDERED) {
                s.run("reserve", String.class, () -> counted(ran, "reserved"));
              }
              s.sleep("cool-off", Duration.ofDays(1));
              if (change == Change.STEP_ADDED_BEFORE_THE_WAIT) {
                s.run("notify", String.class, () -> counted(ran, "notified"));
              }
              if (change == Change.PATCHED_BEFORE_THE_WAIT && ctx.patched("notify")) {
                s.run("notify", String.class, () -> counted(ran, "notified"));
              }
              Optional<String> confirmed =
                  s.waitForEvent("confirm", String.class, Match.any(), Duration.ofDays(7));
              String shipped = s.run("ship", String.class, () -> counted(ran, "shipped"));
              if (change == Change.STEP_ADDED_AT_THE_END) {
                s.run("thank", String.class, () -> counted(ran, "thanked"));
              }
              return charged + packed + shard + confirmed.orElse("-") + shipped;
            });
  }

  private static String counted(AtomicInteger ran, String value) {
    if (ran != null) {
      ran.incrementAndGet();
    }
    return value;
  }

  /** Leaves two runs in flight (one waiting in "confirm", one sleeping) and exports them. */
  @BeforeAll
  static void runsInFlight() throws Exception {
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = order(Change.NONE, null, new ArrayList<>()).serve(kit.workerOptions());
      try {
        WorkflowClient client = kit.client();
        waiting = client.start(NAME, "o-1").runId();
        awaitStep(client, waiting, "cool-off");
        kit.advanceTime(Duration.ofDays(2));
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get(NAME, waiting).waitingFor() != null);
        sleeping = client.start(NAME, "o-2").runId();
        awaitStep(client, sleeping, "cool-off");
      } finally {
        worker.close();
      }
      Exports.write(kit, NAME, exports);
    }
  }

  private static void awaitStep(WorkflowClient client, long run, String step) {
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> client.runs().steps(NAME, run).stream().anyMatch(s -> s.name().equals(step)));
  }

  private ReplayReport check(Change change) {
    return ReplayCheck.of(order(change, ran, nows)).against(exports);
  }

  private static Path file(long run) {
    return exports.resolve(NAME + "-" + run + ".json");
  }

  @Test
  void theCodeTheRunsStartedWithReplaysThemFromTheFilesWithoutRunningAStep() throws IOException {
    ReplayReport report = check(Change.NONE);

    assertThat(report.isCompatible()).isTrue();
    assertThat(report.checked()).containsExactlyInAnyOrder(waiting, sleeping);
    assertThat(report.skipped()).isEmpty();
    report.assertCompatible();
    assertThat(ran).hasValue(0);
    // ctx.now() answered what each run journaled as __now.1, read from its file.
    List<Instant> journaled = new ArrayList<>();
    for (long run : List.of(waiting, sleeping)) {
      for (JsonNode row : JSON.readTree(file(run).toFile()).get("steps")) {
        if (row.get("name").asText().equals("__now.1")) {
          journaled.add(Instant.parse(row.get("output").asText()));
        }
      }
    }
    assertThat(nows).hasSize(2).containsExactlyInAnyOrderElementsOf(journaled);
  }

  @Test
  void aReorderedStepIsCaughtInEveryRunAtItsPosition() {
    ReplayReport report = check(Change.REORDERED);

    assertThat(report.isCompatible()).isFalse();
    assertThat(report.failures())
        .extracting(ReplayFailure::runId)
        .containsExactlyInAnyOrder(waiting, sleeping);
    ReplayFailure f =
        report.failures().stream().filter(x -> x.runId() == waiting).findFirst().orElseThrow();
    assertThat(f.file()).isEqualTo(file(waiting));
    assertThat(f.position()).isEqualTo(1);
    assertThat(f.message())
        .isEqualTo(
            "replay of run "
                + waiting
                + " reached step \"reserve\" where the journal has step \"charge\" (step 1)");
    assertThatThrownBy(report::assertCompatible)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("2 would fail")
        .hasMessageContaining("run " + waiting + " (" + file(waiting) + ")")
        .hasMessageContaining("run " + sleeping + " (" + file(sleeping) + ")");
    assertThat(ran).hasValue(0);
  }

  @Test
  void aRenamedStepIsCaughtWhereTheJournalHasTheOldName() {
    ReplayReport report = check(Change.RENAMED);

    assertThat(report.failures()).hasSize(2);
    for (ReplayFailure f : report.failures()) {
      // charge, __now.1, __uuid.1, __seed, pack-a and pack-b, then reserve.
      assertThat(f.position()).isEqualTo(7);
      assertThat(f.message())
          .contains("reached step \"hold-stock\" where the journal has step \"reserve\" (step 7)");
    }
    assertThat(ran).hasValue(0);
  }

  @Test
  void deterministicValuesTakenInAnotherOrderAreCaught() {
    ReplayReport report = check(Change.VALUES_SWAPPED);

    assertThat(report.failures()).hasSize(2);
    assertThat(report.failures().get(0).message())
        .contains("reached step \"__uuid.1\" where the journal has step \"__now.1\" (step 2)");
  }

  @Test
  void aStepAddedAfterWhereTheJournalsEndIsCompatible() {
    ReplayReport report = check(Change.STEP_ADDED_AT_THE_END);

    report.assertCompatible();
    assertThat(report.checked()).hasSize(2);
    assertThat(ran).hasValue(0);
  }

  @Test
  void aStepAddedBeforeTheWaitARunIsInFailsThatRunOnly() {
    ReplayReport report = check(Change.STEP_ADDED_BEFORE_THE_WAIT);

    // The sleeping run will run the new step when it wakes; the waiting one has passed it, and
    // its wait's row, written when the event comes, would follow the sleep.
    assertThat(report.failures()).extracting(ReplayFailure::runId).containsExactly(waiting);
    assertThat(report.failures().get(0).message())
        .contains("reached step \"notify\" where the journal has step \"confirm\" (step 9)");
    assertThat(report.failures().get(0).position()).isEqualTo(9);
    assertThat(ran).hasValue(0);
  }

  @Test
  void theSameStepBehindPatchedIsCompatible() {
    ReplayReport report = check(Change.PATCHED_BEFORE_THE_WAIT);

    report.assertCompatible();
    assertThat(report.checked()).containsExactlyInAnyOrder(waiting, sleeping);
    assertThat(ran).hasValue(0);
  }

  @Test
  void runsOfAnotherVersionAreSkipped() {
    ReplayReport report = check(Change.NEW_VERSION);

    assertThat(report.checked()).isEmpty();
    assertThat(report.skipped())
        .extracting(ReplayReport.Skipped::runId)
        .containsExactlyInAnyOrder(waiting, sleeping);
    assertThat(report.skipped().get(0).why()).contains("version 1");
    report.assertCompatible();
  }

  @Test
  void aListOfFilesChecksThoseFilesOnly() {
    ReplayReport report =
        ReplayCheck.of(order(Change.REORDERED, ran, nows)).against(List.of(file(sleeping)));

    assertThat(report.checked()).containsExactly(sleeping);
    assertThat(report.failures()).extracting(ReplayFailure::runId).containsExactly(sleeping);
  }

  @Test
  void aMissingPathOrAFileThatIsNotAnExportIsRefusedClearly(@TempDir Path dir) throws IOException {
    ReplayCheck check = ReplayCheck.of(order(Change.NONE, ran, nows));
    assertThatThrownBy(() -> check.against(dir.resolve("nope")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no exported journals at " + dir.resolve("nope"));

    Path bad = Files.writeString(dir.resolve("bad.json"), "{\"workflow\":\"" + NAME + "\"}");
    assertThatThrownBy(() -> check.against(dir))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(bad + " is not an exported journal")
        .hasMessageContaining("runId");

    Files.delete(bad);
    ReplayReport none = check.against(dir);
    assertThat(none.checked()).isEmpty();
    none.assertCompatible();
    try (Stream<Path> left = Files.list(dir)) {
      assertThat(left).isEmpty();
    }
  }
}
