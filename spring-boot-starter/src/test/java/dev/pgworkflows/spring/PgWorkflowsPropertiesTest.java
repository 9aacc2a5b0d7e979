package dev.pgworkflows.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Binding {@code pgworkflows.*}: no server is needed, as no worker starts. */
class PgWorkflowsPropertiesTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(PgWorkflowsAutoConfiguration.class))
          .withPropertyValues("pgworkflows.worker.enabled=false");

  @Test
  void propertiesBindWithTheirDefaults() {
    runner.run(
        ctx -> {
          PgWorkflowsProperties p = ctx.getBean(PgWorkflowsProperties.class);
          assertThat(p.url()).isEqualTo("http://localhost:7700");
          assertThat(p.token()).isNull();
          assertThat(p.worker().concurrency()).isEqualTo(16);
          assertThat(p.worker().pollWait()).isEqualTo(Duration.ofSeconds(30));
          assertThat(p.worker().shutdownGracePeriod()).isEqualTo(Duration.ofSeconds(20));
          assertThat(p.worker().versions()).isEmpty();
        });
  }

  @Test
  void emptyTokensMeanNoneAndTokensNeverShowInToString() {
    runner
        .withPropertyValues("pgworkflows.token=", "pgworkflows.worker.token=s3cret-worker")
        .run(
            ctx -> {
              PgWorkflowsProperties p = ctx.getBean(PgWorkflowsProperties.class);
              assertThat(p.token()).isNull();
              assertThat(p.worker().tokenOr(p.token())).isEqualTo("s3cret-worker");
              assertThat(p.toString()).doesNotContain("s3cret").contains("token=***");
            });
    runner
        .withPropertyValues("pgworkflows.token=s3cret-client", "pgworkflows.worker.token=")
        .run(
            ctx -> {
              PgWorkflowsProperties p = ctx.getBean(PgWorkflowsProperties.class);
              assertThat(p.worker().token()).isNull();
              assertThat(p.worker().tokenOr(p.token())).isEqualTo("s3cret-client");
              assertThat(p.toString()).doesNotContain("s3cret");
            });
  }

  @Test
  void propertiesBindAsGiven() {
    runner
        .withPropertyValues(
            "pgworkflows.url=https://workflows.example:7700",
            "pgworkflows.token=app-token",
            "pgworkflows.worker.token=worker-token",
            "pgworkflows.worker.concurrency=4",
            "pgworkflows.worker.poll-wait=2s",
            "pgworkflows.worker.shutdown-grace-period=1m",
            "pgworkflows.worker.versions.onboard-user=1,2")
        .run(
            ctx -> {
              PgWorkflowsProperties p = ctx.getBean(PgWorkflowsProperties.class);
              assertThat(p.url()).isEqualTo("https://workflows.example:7700");
              assertThat(p.token()).isEqualTo("app-token");
              assertThat(p.worker().enabled()).isFalse();
              assertThat(p.worker().tokenOr(p.token())).isEqualTo("worker-token");
              assertThat(p.worker().concurrency()).isEqualTo(4);
              assertThat(p.worker().pollWait()).isEqualTo(Duration.ofSeconds(2));
              assertThat(p.worker().shutdownGracePeriod()).isEqualTo(Duration.ofMinutes(1));
              assertThat(p.worker().versions()).isEqualTo(Map.of("onboard-user", List.of(1, 2)));
              // Workers are off: no worker bean, but the client is there.
              assertThat(ctx).doesNotHaveBean(WorkflowWorkers.class);
              assertThat(ctx).hasBean("workflowClient");
            });
  }

  @Test
  void aConcurrencyOutOfRangeStopsTheStartupNamingTheProperty() {
    failsWith(
        "pgworkflows.worker.concurrency must be 1 to 1000, got 0",
        "pgworkflows.worker.concurrency=0");
  }

  @Test
  void aUrlThatIsNoHttpUrlStopsTheStartup() {
    failsWith(
        "pgworkflows.url must be an http:// or https:// URL, got localhost:7700",
        "pgworkflows.url=localhost:7700");
  }

  @Test
  void aPollWaitOverThirtySecondsStopsTheStartup() {
    failsWith(
        "pgworkflows.worker.poll-wait must be 0 to 30 seconds, got PT1M",
        "pgworkflows.worker.poll-wait=1m");
  }

  @Test
  void aVersionBelowOneStopsTheStartup() {
    failsWith(
        "pgworkflows.worker.versions.onboard-user must list versions of 1 or more, got [0]",
        "pgworkflows.worker.versions.onboard-user=0");
  }

  @Test
  void aConcurrencyThatIsNoNumberStopsTheStartupNamingTheProperty() {
    runner
        .withPropertyValues("pgworkflows.worker.concurrency=lots")
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .hasStackTraceContaining(
                      "Failed to bind properties under 'pgworkflows.worker.concurrency' to int")
                  .rootCause()
                  .hasMessageContaining("lots");
            });
  }

  @Test
  void versionsForAWorkflowWithNoBeanStopTheStartupNamingIt() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PgWorkflowsAutoConfiguration.class))
        .withPropertyValues("pgworkflows.worker.versions.onbaord-user=2")
        .withUserConfiguration(Onboarding.class)
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .rootCause()
                  .hasMessage(
                      "pgworkflows.worker.versions names [onbaord-user], for which there is no"
                          + " Workflow bean (there are: [onboard-user])");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Onboarding {
    @Bean
    Workflow<String, String> onboard() {
      return Workflow.define("onboard-user", String.class, String.class).run((ctx, in) -> in);
    }
  }

  private void failsWith(String message, String... properties) {
    runner
        .withPropertyValues(properties)
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .hasMessageContaining("pgworkflows")
                  .rootCause()
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessage(message);
            });
  }
}
