/**
 * Testing workflows: {@link dev.pgworkflows.testkit.WorkflowTestKit} runs them against a real
 * server on a fresh embedded PostgreSQL, and {@link dev.pgworkflows.testkit.ReplayCheck} replays
 * recorded journals against new code, so a change that would break runs in flight fails in CI.
 */
package dev.pgworkflows.testkit;
