/**
 * The engine of pgworkflows over JDBC: what a workflow needs beyond the SQL functions (taking tasks
 * and waking on LISTEN/NOTIFY, completing them in group commits, leases, starts, signals, reads,
 * and the background jobs under one leader per database). It has two hosts: the server, which puts
 * HTTP, tokens, task streams and the dashboard around it, and an application that serves its
 * workflows with no server ({@code dev.pgworkflows.workflows.PgWorkflows} in {@code
 * workflows-sdk}). Its machinery is internal: programs use it through one of those two hosts.
 */
package dev.pgworkflows.engine;
