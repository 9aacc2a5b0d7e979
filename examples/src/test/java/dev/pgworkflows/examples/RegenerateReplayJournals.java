package dev.pgworkflows.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.examples.OnboardUser.Signup;
import dev.pgworkflows.testkit.WorkflowTestKit;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkflowClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Makes the journals {@link ReplayGateTest} checks: two onboard-user runs left in flight on a kit's
 * server (one waiting for "verify", one in its welcome delay), exported by {@code pgw journals
 * export} into {@code src/test/resources/replay/onboard-user}. Run it when the workflow's journals
 * should be those of the code as it is now (build the pgw jar first):
 *
 * <pre>
 * ./mvnw -B -pl cli -am package -DskipTests
 * ./mvnw -B -pl examples -am test -Dtest=RegenerateReplayJournals -Dreplay.regenerate=true \
 *     -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * In a real deployment the files come from the production server instead: {@code pgw journals
 * export --workflow onboard-user --out src/test/resources/replay/onboard-user}.
 */
@EnabledIfSystemProperty(named = "replay.regenerate", matches = "true")
class RegenerateReplayJournals {
  static final Path DIR = Path.of("src/test/resources/replay/onboard-user");
  static final Duration WELCOME_DELAY = Duration.ofMinutes(5);

  @Test
  void exportTwoRunsInFlight() throws Exception {
    try (WorkflowTestKit kit = WorkflowTestKit.start()) {
      Worker worker = OnboardUser.workflow(WELCOME_DELAY).serve(kit.workerOptions());
      try {
        WorkflowClient client = kit.client();
        long verifying = client.start("onboard-user", new Signup("ada@example.com")).runId();
        awaitSteps(client, verifying, 2);
        kit.advanceTime(WELCOME_DELAY);
        Awaitility.await()
            .atMost(20, TimeUnit.SECONDS)
            .until(() -> client.runs().get("onboard-user", verifying).waitingFor() != null);
        long delayed = client.start("onboard-user", new Signup("grace@example.com")).runId();
        awaitSteps(client, delayed, 2);
      } finally {
        worker.close();
      }
      try (Stream<Path> old = Files.list(DIR)) {
        for (Path f : old.filter(f -> f.toString().endsWith(".json")).toList()) {
          Files.delete(f);
        }
      }
      ProcessBuilder export =
          new ProcessBuilder(
                  "../cli/bin/pgw",
                  "journals",
                  "export",
                  "--workflow",
                  "onboard-user",
                  "--out",
                  DIR.toString())
              .redirectErrorStream(true);
      export.environment().put("WORKFLOWS_URL", kit.url());
      export.environment().put("WORKFLOWS_TOKEN", kit.token(WorkflowTestKit.Role.CLIENT));
      Process pgw = export.start();
      pgw.getOutputStream().close();
      String out = new String(pgw.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(pgw.waitFor()).as(out).isZero();
      System.out.print(out);
    }
  }

  private static void awaitSteps(WorkflowClient client, long run, int steps) {
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> client.runs().steps("onboard-user", run).size() >= steps);
  }
}
