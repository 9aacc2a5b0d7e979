package dev.pgworkflows.spring;

import dev.pgworkflows.workflows.PgWorkflows;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * A {@link WorkflowClient} for {@code pgworkflows.url} (or, with {@code pgworkflows.mode=embedded},
 * the engine in this application over its DataSource, with no server), workers for the
 * application's {@link Workflow} beans ({@link WorkflowWorkers}), a health indicator named {@code
 * pgworkflows} when Spring Boot's health support is present, the workers' meters when Micrometer
 * is, and a {@link WorkflowStarter} for the application's DataSource when it has one.
 */
// After the DataSource's: WorkflowStarter needs the application's one.
@AutoConfiguration(
    afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@EnableConfigurationProperties(PgWorkflowsProperties.class)
public class PgWorkflowsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(name = "pgworkflows.mode", havingValue = "server", matchIfMissing = true)
  public WorkflowClient workflowClient(PgWorkflowsProperties properties) {
    return properties.token() == null
        ? WorkflowClient.connect(properties.url())
        : WorkflowClient.connect(properties.url(), properties.token());
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBooleanProperty(name = "pgworkflows.worker.enabled", matchIfMissing = true)
  public WorkflowWorkers workflowWorkers(
      PgWorkflowsProperties properties,
      ObjectProvider<Workflow<?, ?>> workflows,
      ObjectProvider<PgWorkflows> embedded,
      Environment environment) {
    Duration phaseTimeout =
        Binder.get(environment)
            .bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
            .orElse(Duration.ofSeconds(30));
    return new WorkflowWorkers(properties, workflows, phaseTimeout, embedded.getIfAvailable());
  }

  /**
   * {@code pgworkflows.mode=embedded}: no server; the engine runs in this application over its one
   * DataSource ({@link PgWorkflows}: the schema migrated unless {@code pgworkflows.migrate=false},
   * the background jobs run here under one leader per database), and the client and the workers
   * work over JDBC.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(name = "pgworkflows.mode", havingValue = "embedded")
  static class EmbeddedConfiguration {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    PgWorkflows pgWorkflows(DataSource dataSource, PgWorkflowsProperties properties) {
      return PgWorkflows.builder(dataSource).migrate(properties.migrate()).start();
    }

    /** The engine's own client; it closes with {@link PgWorkflows}. */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    WorkflowClient workflowClient(PgWorkflows pgWorkflows) {
      return pgWorkflows.client();
    }
  }

  /** Health, when the application has Spring Boot's health support. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  @ConditionalOnEnabledHealthIndicator("pgworkflows")
  static class HealthConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "pgworkflowsHealthIndicator")
    WorkflowsHealthIndicator pgworkflowsHealthIndicator(
        PgWorkflowsProperties properties,
        ObjectProvider<WorkflowWorkers> workers,
        ObjectProvider<PgWorkflows> embedded) {
      return new WorkflowsHealthIndicator(
          properties.url(), workers.getIfAvailable(), embedded.getIfAvailable());
    }
  }

  /**
   * The workers' meters, when the application has Micrometer; Spring Boot's metrics support binds
   * them to its registries.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterBinder.class)
  @ConditionalOnBooleanProperty(name = "pgworkflows.worker.enabled", matchIfMissing = true)
  static class MetricsConfiguration {
    @Bean
    @ConditionalOnMissingBean
    WorkerMeterBinder pgworkflowsWorkerMeterBinder(
        WorkflowWorkers workers, ObjectProvider<Workflow<?, ?>> workflows) {
      return new WorkerMeterBinder(
          workers, workflows.orderedStream().map(Workflow::name).distinct().toList());
    }
  }

  /**
   * {@link WorkflowStarter}, when the application has Spring's JDBC support and one DataSource
   * (which must be the server's database).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(DataSourceUtils.class)
  @ConditionalOnSingleCandidate(DataSource.class)
  static class TransactionsConfiguration {
    @Bean
    @ConditionalOnMissingBean
    WorkflowStarter workflowStarter(DataSource dataSource) {
      return new WorkflowStarter(dataSource);
    }
  }
}
