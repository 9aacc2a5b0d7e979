package dev.pgworkflows.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 3, unit = TimeUnit.MINUTES)
class WorkflowTestKitTest {

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
            .until(() -> client.steps("patient", run).size() == 1);
        kit.advanceTime(Duration.ofDays(1));
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.get("patient", run).waitingFor() != null);
        long t0 = System.nanoTime();
        kit.advanceTime(Duration.ofDays(7));
        String result = client.awaitResult("patient", run, String.class, Duration.ofSeconds(20));
        assertThat(result).isEqualTo("no reply in a week");
        assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(10_000);
      } finally {
        worker.close();
      }
    }
  }
}
