package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.ApiException;
import dev.pgworkflows.workflows.Arm;
import dev.pgworkflows.workflows.ChildRun;
import dev.pgworkflows.workflows.Fired;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class WorkflowTestKitTest {

  @Test
  void aWorkflowRunsOverJdbcBesideTheServerAndTheServerSeesIt() {
    Workflow<String, String> wf =
        Workflow.define("over-jdbc", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().sleep("a-day", Duration.ofDays(1));
                  return ctx.step().run("echo", String.class, () -> in + "!");
                });
    try (WorkflowTestKit kit = WorkflowTestKit.start();
        WorkflowClient jdbc = WorkflowClient.connect(kit.dataSource())) {
      Worker worker = wf.serve(kit.jdbcWorkerOptions());
      try {
        long run = jdbc.start("over-jdbc", "hi").runId();
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> kit.client().runs().steps("over-jdbc", run).size() == 1);
        kit.advanceTime(Duration.ofDays(1));
        assertThat(jdbc.runs().awaitResult("over-jdbc", run, String.class, Duration.ofSeconds(20)))
            .isEqualTo("hi!");
        assertThat(kit.client().runs().get("over-jdbc", run).status())
            .isEqualTo(RunStatus.COMPLETED);
      } finally {
        worker.close();
      }
    }
  }

  @Test
  void aSevenDayWaitAndADaySleepPassInMilliseconds() {
    Workflow<String, String> wf =
        Workflow.define("patient", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().sleep("a-day", Duration.ofDays(1));
                  Optional<String> answer =
                      ctx.step()
                          .waitForEvent("reply", String.class, Match.any(), Duration.ofDays(7));
                  return answer.orElse("no reply in a week");
                });
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = wf.serve(kit.workerOptions());
      try {
        WorkflowClient client = kit.client();
        long run = client.start("patient", "hi").runId();
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().steps("patient", run).size() == 1);
        kit.advanceTime(Duration.ofDays(1));
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get("patient", run).waitingFor() != null);
        long t0 = System.nanoTime();
        kit.advanceTime(Duration.ofDays(7));
        String result =
            client.runs().awaitResult("patient", run, String.class, Duration.ofSeconds(20));
        assertThat(result).isEqualTo("no reply in a week");
        assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(10_000);
      } finally {
        worker.close();
      }
    }
  }

  @Test
  void eachRolesTokenMayDoWhatItsRoleDoesAndNoMore() {
    Workflow<String, String> wf =
        Workflow.define("guarded", String.class, String.class)
            .run((ctx, in) -> ctx.step().run("echo", String.class, () -> in));
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      long run = kit.client().start("guarded", "hi").runId();
      assertThatThrownBy(() -> kit.client().runs().cancel("guarded", run))
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(403))
          .hasMessageContaining("scope \"admin\"");
      assertThatThrownBy(() -> kit.client(WorkflowTestKit.Role.WORKER).start("guarded", "no"))
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(403))
          .hasMessageContaining("scope \"start\"");
      assertThat(kit.client(WorkflowTestKit.Role.ADMIN).runs().cancel("guarded", run)).isTrue();
      long second = kit.client().start("guarded", "again").runId();
      Worker worker = wf.serve(kit.workerOptions());
      try {
        assertThat(
                kit.client()
                    .runs()
                    .awaitResult("guarded", second, String.class, Duration.ofSeconds(20)))
            .isEqualTo("again");
      } finally {
        worker.close();
      }
    }
  }

  @Test
  void aParentWithAChildAndAWaitForAnyRunsUnderTheKitsTokens() {
    Workflow<String, String> kid =
        Workflow.define("kit-kid", String.class, String.class)
            .run((ctx, in) -> ctx.step().run("shout", String.class, in::toUpperCase));
    Workflow<String, String> parent =
        Workflow.define("kit-parent", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<String> child = ctx.step().startChild("kid", kid, in);
                  Fired f =
                      ctx.step().waitForAny("approval", Duration.ofDays(1), Arm.event("approved"));
                  return child.result() + (f.timedOut() ? " unapproved" : " approved");
                });
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      List<Worker> workers =
          List.of(parent.serve(kit.workerOptions()), kid.serve(kit.workerOptions()));
      try {
        WorkflowClient client = kit.client();
        long run = client.start(parent, "hi").runId();
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get("kit-parent", run).waitingFor() != null);
        kit.advanceTime(Duration.ofDays(1));
        assertThat(
                client.runs().awaitResult("kit-parent", run, String.class, Duration.ofSeconds(20)))
            .isEqualTo("HI unapproved");
        assertThat(client.runs().get("kit-parent", run).children()).hasSize(1);
      } finally {
        for (Worker w : workers) {
          w.close();
        }
      }
    }
  }
}
