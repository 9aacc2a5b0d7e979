/**
 * The Java SDK: define a workflow ({@link dev.pgworkflows.workflows.Workflow}) whose body runs its
 * steps through a {@link dev.pgworkflows.workflows.StepContext}, serve it with a {@link
 * dev.pgworkflows.workflows.Worker}, and start, signal and read its runs with a {@link
 * dev.pgworkflows.workflows.WorkflowClient} — over a server's REST API, or over JDBC with no server
 * ({@link dev.pgworkflows.workflows.PgWorkflows}). {@link dev.pgworkflows.workflows.WorkflowSql}
 * starts and signals runs inside a transaction of the caller's own. Everything under {@code
 * internal} is machinery and may change in any release.
 */
package dev.pgworkflows.workflows;
