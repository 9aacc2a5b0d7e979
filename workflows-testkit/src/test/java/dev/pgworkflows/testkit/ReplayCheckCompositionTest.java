package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pgworkflows.workflows.Arm;
import dev.pgworkflows.workflows.ChildRun;
import dev.pgworkflows.workflows.Fired;
import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReplayCheck} on a run that took a patched path, started a child, had a wait on arms fire,
 * and now waits for its child's end: each replays from its journal row.
 */
class ReplayCheckCompositionTest {
  private static final String NAME = "replayed-parent";

  enum Change {
    NONE,
    PATCH_REMOVED,
    OTHER_ARM,
    RESULT_BEFORE_THE_WAIT
  }

  @TempDir static Path exports;
  static long run;

  private final AtomicInteger ran = new AtomicInteger();

  static Workflow<String, String> label() {
    return Workflow.define("replayed-label", String.class, String.class)
        .run((ctx, in) -> ctx.step().run("print", String.class, () -> "label-" + in));
  }

  static Workflow<String, String> parent(Change change, AtomicInteger ran) {
    return Workflow.define(NAME, String.class, String.class)
        .run(
            (ctx, in) -> {
              StepContext s = ctx.step();
              if (change != Change.PATCH_REMOVED && ctx.patched("express")) {
                s.run("prioritise", () -> ran.incrementAndGet());
              }
              ChildRun<String> label = s.startChild("label", label(), in);
              if (change == Change.RESULT_BEFORE_THE_WAIT) {
                label.result();
              }
              String event = change == Change.OTHER_ARM ? "payment-received" : "payment";
              Fired paid = s.waitForAny("paid", Duration.ofDays(1), Arm.event(event));
              return label.result() + paid.timedOut();
            });
  }

  /** One run in flight, waiting for its child (which no worker serves) to end. */
  @BeforeAll
  static void aRunInFlight() throws Exception {
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = parent(Change.NONE, new AtomicInteger()).serve(kit.workerOptions());
      try {
        WorkflowClient client = kit.client();
        run = client.start(NAME, "o-1").runId();
        client.signal(NAME, run, "payment", "paid");
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get(NAME, run).waitingFor() != null && stepped(client, 4));
      } finally {
        worker.close();
      }
      Exports.write(kit, NAME, exports);
    }
  }

  private static boolean stepped(WorkflowClient client, int steps) {
    return client.runs().steps(NAME, run).size() >= steps;
  }

  private ReplayReport check(Change change) {
    return ReplayCheck.of(parent(change, ran)).against(exports);
  }

  @Test
  void theExportedRunHoldsThePatchTheChildAndTheFiredWait() throws Exception {
    var file = new ObjectMapper().readTree(exports.resolve(NAME + "-" + run + ".json").toFile());
    assertThat(file.get("steps").findValuesAsText("name"))
        .isEqualTo(List.of("__patch.express", "prioritise", "label", "paid"));
    assertThat(file.at("/waitingFor/step").asText()).isEqualTo("label.result");
  }

  @Test
  void theSameCodeReplaysThePatchChildAndWaitFromTheirRows() {
    ReplayReport report = check(Change.NONE);

    report.assertCompatible();
    assertThat(report.checked()).containsExactly(run);
    assertThat(ran).hasValue(0);
  }

  @Test
  void removingAPatchARunTookIsCaught() {
    ReplayReport report = check(Change.PATCH_REMOVED);

    assertThat(report.failures()).hasSize(1);
    assertThat(report.failures().get(0).position()).isEqualTo(1);
    assertThat(report.failures().get(0).message())
        .contains("reached step \"label\" where the journal has step \"__patch.express\" (step 1)");
  }

  @Test
  void aWaitOnAnotherEventIsCaught() {
    ReplayReport report = check(Change.OTHER_ARM);

    assertThat(report.failures()).hasSize(1);
    assertThat(report.failures().get(0).message())
        .isEqualTo("wait \"paid\" arm 0 waits for another event than the journal's");
    assertThat(report.failures().get(0).position()).isZero();
  }

  @Test
  void awaitingTheChildBeforeTheWaitIsCaught() {
    ReplayReport report = check(Change.RESULT_BEFORE_THE_WAIT);

    assertThat(report.failures()).hasSize(1);
    assertThat(report.failures().get(0).message())
        .contains("reached step \"label.result\" where the journal has step \"paid\" (step 4)");
    assertThat(ran).hasValue(0);
  }
}
