/**
 * The Java SDK: define a workflow ({@link dev.pgworkflows.workflows.Workflow}) whose body runs its
 * steps through a {@link dev.pgworkflows.workflows.StepContext}, serve it with a {@link
 * dev.pgworkflows.workflows.Worker}, and start and signal its runs with a {@link
 * dev.pgworkflows.workflows.WorkflowClient}, whose {@link dev.pgworkflows.workflows.Runs}, {@link
 * dev.pgworkflows.workflows.Workflows}, {@link dev.pgworkflows.workflows.RateLimits} and {@link
 * dev.pgworkflows.workflows.Schedules} reach the rest — over a server's REST API, or over JDBC with
 * no server ({@link dev.pgworkflows.workflows.PgWorkflows}). Options are made by builders ({@link
 * dev.pgworkflows.workflows.StartOptions#builder()}). {@link dev.pgworkflows.workflows.WorkflowSql}
 * starts and signals runs inside a transaction of the caller's own. Everything under {@code
 * internal} is machinery and may change in any release.
 */
package dev.pgworkflows.workflows;
