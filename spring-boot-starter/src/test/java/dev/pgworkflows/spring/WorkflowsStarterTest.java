package dev.pgworkflows.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testkit.WorkflowTestKit;
import dev.pgworkflows.testkit.WorkflowTestKit.Role;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.LifecycleAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The starter against a real server and its PostgreSQL (the test kit's). */
class WorkflowsStarterTest {
  private static WorkflowTestKit kit;

  @BeforeAll
  static void startServer() {
    kit = WorkflowTestKit.start();
  }

  @AfterAll
  static void stopServer() {
    kit.close();
  }

  /** The application's view of {@code server}: its client token, its workers' token. */
  private static ApplicationContextRunner runner(WorkflowTestKit server) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PgWorkflowsAutoConfiguration.class))
        .withPropertyValues(
            "pgworkflows.url=" + server.url(),
            "pgworkflows.token=" + server.token(Role.CLIENT),
            "pgworkflows.worker.token=" + server.token(Role.WORKER),
            "pgworkflows.worker.poll-wait=1s",
            "pgworkflows.worker.concurrency=4");
  }

  @Configuration(proxyBeanMethods = false)
  static class Greeting {
    @Bean
    Workflow<String, String> greet() {
      return Workflow.define("spring-greet", String.class, String.class)
          .run(
              (ctx, name) -> {
                String hello = ctx.step().run("hello", String.class, () -> "hello " + name);
                return ctx.step().run("shout", String.class, hello::toUpperCase);
              });
    }
  }

  @Test
  void theClientBeanStartsAndReadsRunsWithTheConfiguredToken() {
    runner(kit)
        .withPropertyValues("pgworkflows.worker.enabled=false")
        .run(
            ctx -> {
              WorkflowClient client = ctx.getBean(WorkflowClient.class);
              long run = client.start("spring-unserved", "x").runId();
              assertThat(client.runs().get("spring-unserved", run).status())
                  .isEqualTo(RunStatus.RUNNING);
              assertThat(ctx).doesNotHaveBean(WorkflowWorkers.class);
            });
  }

  @Test
  void aWorkflowBeanIsServedAndItsRunCompletes() {
    runner(kit)
        .withUserConfiguration(Greeting.class)
        .run(
            ctx -> {
              assertThat(ctx.getBean(WorkflowWorkers.class).isRunning()).isTrue();
              WorkflowClient client = ctx.getBean(WorkflowClient.class);
              long run = client.start("spring-greet", "ada").runId();
              assertThat(
                      client
                          .runs()
                          .awaitResult("spring-greet", run, String.class, Duration.ofSeconds(30)))
                  .isEqualTo("HELLO ADA");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class SlowStep {
    static final CountDownLatch entered = new CountDownLatch(1);
    static final CountDownLatch release = new CountDownLatch(1);

    @Bean
    Workflow<String, String> slow() {
      return Workflow.define("spring-slow", String.class, String.class)
          .run(
              (ctx, in) ->
                  ctx.step()
                      .run(
                          "wait-for-release",
                          String.class,
                          () -> {
                            entered.countDown();
                            release.await();
                            return "finished " + in;
                          }));
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class StuckStep {
    static final CountDownLatch entered = new CountDownLatch(1);
    static final CountDownLatch release = new CountDownLatch(1);

    @Bean
    Workflow<String, String> stuck() {
      return Workflow.define("spring-stuck", String.class, String.class)
          .run(
              (ctx, in) ->
                  ctx.step()
                      .run(
                          "wait-for-release",
                          String.class,
                          () -> {
                            entered.countDown();
                            release.await();
                            return "finished " + in;
                          }));
    }
  }

  @Test
  void closingTheContextWaitsForTheWorkersNoLongerThanSpringsShutdownPhaseTimeout()
      throws Exception {
    WorkflowClient client = kit.client();
    AtomicReference<ConfigurableApplicationContext> context = new AtomicReference<>();
    runner(kit)
        .withConfiguration(AutoConfigurations.of(LifecycleAutoConfiguration.class))
        .withUserConfiguration(StuckStep.class)
        .withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=1s")
        .run(
            ctx -> {
              context.set(ctx.getSourceApplicationContext());
              WorkflowWorkers workers = ctx.getBean(WorkflowWorkers.class);
              long run = client.start("spring-stuck", "order-8").runId();
              assertThat(StuckStep.entered.await(30, TimeUnit.SECONDS)).isTrue();
              long t0 = System.nanoTime();
              context.get().close();
              // Spring stopped waiting after its phase timeout; the step still runs.
              assertThat(Duration.ofNanos(System.nanoTime() - t0))
                  .isLessThan(Duration.ofSeconds(10));
              assertThat(workers.metrics("spring-stuck").busySlots()).isEqualTo(1);
              StuckStep.release.countDown();
              assertThat(
                      client
                          .runs()
                          .awaitResult("spring-stuck", run, String.class, Duration.ofSeconds(30)))
                  .isEqualTo("finished order-8");
            });
  }

  @Test
  void closingTheContextLetsTheStepInFlightFinishBeforeTheWorkersStop() throws Exception {
    WorkflowClient client = kit.client();
    AtomicReference<ConfigurableApplicationContext> context = new AtomicReference<>();
    runner(kit)
        .withUserConfiguration(SlowStep.class)
        .run(
            ctx -> {
              // Kept open past run(): the test closes it while the step runs.
              context.set(ctx.getSourceApplicationContext());
              WorkflowWorkers workers = ctx.getBean(WorkflowWorkers.class);
              long run = client.start("spring-slow", "order-7").runId();
              assertThat(SlowStep.entered.await(30, TimeUnit.SECONDS)).isTrue();
              Thread closing = new Thread(() -> context.get().close(), "close-context");
              closing.start();
              // The close waits for the step, which is still running.
              closing.join(1_000);
              assertThat(closing.isAlive()).isTrue();
              assertThat(workers.isRunning()).isFalse();
              assertThat(workers.metrics("spring-slow").busySlots()).isEqualTo(1);
              SlowStep.release.countDown();
              closing.join(30_000);
              assertThat(closing.isAlive()).isFalse();
              // The step was the run's last: its result and the run's end were written on close.
              assertThat(client.runs().get("spring-slow", run).status())
                  .isEqualTo(RunStatus.COMPLETED);
              List<StepInfo> steps = client.runs().steps("spring-slow", run);
              assertThat(steps).extracting(StepInfo::name).containsExactly("wait-for-release");
              assertThat(client.runs().awaitResult("spring-slow", run, String.class, Duration.ZERO))
                  .isEqualTo("finished order-7");
            });
  }

  @Test
  void healthIsUpWhileTheServerAnswersAndDownOnceItStopped() {
    WorkflowTestKit own = WorkflowTestKit.start();
    try {
      runner(own)
          .withUserConfiguration(Greeting.class)
          .run(
              ctx -> {
                WorkflowsHealthIndicator indicator =
                    ctx.getBean("pgworkflowsHealthIndicator", WorkflowsHealthIndicator.class);
                Health up = indicator.health();
                assertThat(up.getStatus()).isEqualTo(Status.UP);
                assertThat(up.getDetails()).containsEntry("server", own.url());
                assertThat(up.getDetails().get("readyz").toString()).startsWith("200 ");
                assertThat(up.getDetails().get("workers").toString())
                    .contains("running=true")
                    .contains("spring-greet={")
                    .contains("slots=4");
                own.close();
                Health down = indicator.health();
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails().get("error").toString())
                    .startsWith("server unreachable: ");
              });
    } finally {
      own.close();
    }
  }

  /** A step that fails once and then succeeds, and one that fails the run. */
  @Configuration(proxyBeanMethods = false)
  static class Flaky {
    static final AtomicInteger attempts = new AtomicInteger();

    @Bean
    Workflow<String, String> flaky() {
      return Workflow.define("spring-flaky", String.class, String.class)
          .run(
              (ctx, in) -> {
                ctx.step()
                    .run(
                        "second-time-lucky",
                        String.class,
                        () -> {
                          if (attempts.incrementAndGet() == 1) {
                            throw new IllegalStateException("not yet");
                          }
                          return "ok";
                        },
                        Retry.fixed(2, Duration.ofMillis(10)));
                return ctx.step()
                    .run(
                        "give-up",
                        String.class,
                        () -> {
                          throw new IllegalStateException("never");
                        },
                        Retry.none());
              });
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Registry {
    @Bean
    SimpleMeterRegistry simpleMeterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void workerMetricsAppearInTheMeterRegistryAfterARun() {
    runner(kit)
        .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
        .withUserConfiguration(Greeting.class, Flaky.class, Registry.class)
        .run(
            ctx -> {
              MeterRegistry registry = ctx.getBean(SimpleMeterRegistry.class);
              WorkflowClient client = ctx.getBean(WorkflowClient.class);
              long run = client.start("spring-greet", "grace").runId();
              client.runs().awaitResult("spring-greet", run, String.class, Duration.ofSeconds(30));
              Awaitility.await()
                  .atMost(10, TimeUnit.SECONDS)
                  .untilAsserted(
                      () -> {
                        assertThat(
                                registry
                                    .get("pgworkflows.worker.runs")
                                    .tags("workflow", "spring-greet", "outcome", "completed")
                                    .functionCounter()
                                    .count())
                            .isGreaterThanOrEqualTo(1);
                        assertThat(
                                registry
                                    .get("pgworkflows.worker.steps")
                                    .tags("workflow", "spring-greet", "outcome", "succeeded")
                                    .functionCounter()
                                    .count())
                            .isGreaterThanOrEqualTo(2);
                      });
              assertThat(
                      registry
                          .get("pgworkflows.worker.steps")
                          .tags("workflow", "spring-greet", "outcome", "failed")
                          .functionCounter()
                          .count())
                  .isZero();
              assertThat(
                      registry
                          .get("pgworkflows.worker.tasks")
                          .tags("workflow", "spring-greet")
                          .functionCounter()
                          .count())
                  .isGreaterThanOrEqualTo(1);
              assertThat(
                      registry
                          .get("pgworkflows.worker.slots")
                          .tags("workflow", "spring-greet")
                          .gauge()
                          .value())
                  .isEqualTo(4);
              assertThat(
                      registry
                          .get("pgworkflows.worker.slots.busy")
                          .tags("workflow", "spring-greet")
                          .gauge()
                          .value())
                  .isZero();
              long failing = client.start("spring-flaky", "x").runId();
              Awaitility.await()
                  .atMost(30, TimeUnit.SECONDS)
                  .until(
                      () ->
                          client.runs().get("spring-flaky", failing).status() == RunStatus.FAILED);
              Awaitility.await()
                  .atMost(10, TimeUnit.SECONDS)
                  .untilAsserted(
                      () -> {
                        assertThat(count(registry, "pgworkflows.worker.runs", "failed"))
                            .isEqualTo(1);
                        assertThat(count(registry, "pgworkflows.worker.runs", "completed"))
                            .isZero();
                        assertThat(count(registry, "pgworkflows.worker.steps", "failed"))
                            .isEqualTo(2);
                        assertThat(count(registry, "pgworkflows.worker.steps", "succeeded"))
                            .isEqualTo(1);
                      });
            });
  }

  /** A counter of spring-flaky's worker with {@code outcome}. */
  private static double count(MeterRegistry registry, String name, String outcome) {
    return registry
        .get(name)
        .tags("workflow", "spring-flaky", "outcome", outcome)
        .functionCounter()
        .count();
  }
}
