package dev.pgworkflows.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.PgWorkflows;
import dev.pgworkflows.workflows.QueueSchemaException;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code pgworkflows.mode=embedded}: no server, the engine in the application over its DataSource
 * (a real PostgreSQL database with no schema at first).
 */
class EmbeddedModeTest {
  private static ApplicationContextRunner runner(TestDatabase db) {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class, PgWorkflowsAutoConfiguration.class))
        .withPropertyValues(
            "pgworkflows.mode=embedded",
            "pgworkflows.url=http://127.0.0.1:1",
            "spring.datasource.url=" + db.jdbcUrl(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + db.password());
  }

  @Configuration(proxyBeanMethods = false)
  static class Greeting {
    @Bean
    Workflow<String, String> greet() {
      return Workflow.define("embedded-greet", String.class, String.class)
          .run(
              (ctx, name) -> {
                String hello = ctx.step().run("hello", String.class, () -> "hello " + name);
                return ctx.step().run("shout", String.class, hello::toUpperCase);
              });
    }
  }

  @Test
  void theApplicationsWorkflowsRunOverItsDataSourceWithNoServer() {
    runner(TestDatabase.blank())
        .withUserConfiguration(Greeting.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed().hasSingleBean(PgWorkflows.class);
              WorkflowClient client = ctx.getBean(WorkflowClient.class);
              long runId = client.start("embedded-greet", "ada").runId();
              assertThat(
                      client
                          .runs()
                          .awaitResult(
                              "embedded-greet", runId, String.class, Duration.ofSeconds(30)))
                  .isEqualTo("HELLO ADA");
              Health health = ctx.getBean(WorkflowsHealthIndicator.class).health();
              assertThat(health.getStatus()).isEqualTo(Status.UP);
              assertThat(health.getDetails()).containsEntry("mode", "embedded");
            });
  }

  @Test
  void withoutMigratingABlankDatabaseStopsTheApplicationNamingTheVersion() {
    runner(TestDatabase.blank())
        .withPropertyValues("pgworkflows.migrate=false")
        .run(
            ctx ->
                assertThat(ctx)
                    .hasFailed()
                    .getFailure()
                    .rootCause()
                    .isInstanceOf(QueueSchemaException.class)
                    .hasMessageContaining("not installed"));
  }
}
