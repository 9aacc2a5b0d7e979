/**
 * The Spring Boot starter: workflow beans served by workers the application context runs, a {@link
 * dev.pgworkflows.spring.WorkflowStarter} to start runs from application code, health and metrics,
 * against a server or embedded over the application's own {@code DataSource} ({@link
 * dev.pgworkflows.spring.PgWorkflowsProperties}).
 */
package dev.pgworkflows.spring;
