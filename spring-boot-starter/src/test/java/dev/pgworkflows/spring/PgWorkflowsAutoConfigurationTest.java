package dev.pgworkflows.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.WorkflowClient;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The auto-configuration with and without its optional dependencies (no server needed: without
 * Workflow beans no worker starts, and nothing here calls the server).
 */
class PgWorkflowsAutoConfigurationTest {
  private static ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                PgWorkflowsAutoConfiguration.class, DataSourceAutoConfiguration.class))
        .withPropertyValues(
            "pgworkflows.url=http://127.0.0.1:1",
            "spring.datasource.url=jdbc:postgresql://127.0.0.1:1/none");
  }

  @Test
  void withEveryOptionalDependencyEveryBeanIsThere() {
    runner()
        .run(
            ctx ->
                assertThat(ctx)
                    .hasNotFailed()
                    .hasSingleBean(WorkflowClient.class)
                    .hasSingleBean(WorkflowWorkers.class)
                    .hasSingleBean(WorkflowsHealthIndicator.class)
                    .hasSingleBean(WorkerMeterBinder.class)
                    .hasSingleBean(WorkflowStarter.class));
  }

  @Test
  void withoutSpringBootHealthThereIsNoHealthIndicatorAndTheRestWorks() {
    runner()
        .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(
            ctx ->
                assertThat(ctx)
                    .hasNotFailed()
                    .doesNotHaveBean(WorkflowsHealthIndicator.class)
                    .hasSingleBean(WorkflowClient.class)
                    .hasSingleBean(WorkflowWorkers.class)
                    .hasSingleBean(WorkerMeterBinder.class)
                    .hasSingleBean(WorkflowStarter.class));
  }

  @Test
  void withoutMicrometerThereAreNoMetersAndTheRestWorks() {
    runner()
        .withClassLoader(new FilteredClassLoader(MeterBinder.class))
        .run(
            ctx ->
                assertThat(ctx)
                    .hasNotFailed()
                    .doesNotHaveBean(WorkerMeterBinder.class)
                    .hasSingleBean(WorkflowClient.class)
                    .hasSingleBean(WorkflowWorkers.class)
                    .hasSingleBean(WorkflowsHealthIndicator.class));
  }

  @Test
  void withoutSpringJdbcOrADataSourceThereIsNoStarterAndTheRestWorks() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PgWorkflowsAutoConfiguration.class))
        .withPropertyValues("pgworkflows.url=http://127.0.0.1:1")
        .withClassLoader(new FilteredClassLoader("org.springframework.jdbc"))
        .run(
            ctx ->
                assertThat(ctx)
                    .hasNotFailed()
                    .doesNotHaveBean(WorkflowStarter.class)
                    .hasSingleBean(WorkflowClient.class)
                    .hasSingleBean(WorkflowWorkers.class));
    // Spring's JDBC support present, but no DataSource.
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PgWorkflowsAutoConfiguration.class))
        .withPropertyValues("pgworkflows.url=http://127.0.0.1:1")
        .run(
            ctx ->
                assertThat(ctx)
                    .hasNotFailed()
                    .doesNotHaveBean(WorkflowStarter.class)
                    .hasSingleBean(WorkflowClient.class));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnClient {
    @Bean
    WorkflowClient ownClient() {
      return WorkflowClient.connect("http://127.0.0.1:2");
    }
  }

  @Test
  void anApplicationsOwnWorkflowClientReplacesTheStartersOne() {
    runner()
        .withUserConfiguration(OwnClient.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed().hasSingleBean(WorkflowClient.class);
              assertThat(ctx.getBean(WorkflowClient.class))
                  .isSameAs(ctx.getBean("ownClient", WorkflowClient.class));
            });
  }
}
