/**
 * The retention sweeper: deletes ended runs, dead letters and the webhook outbox past their
 * retention, in bounded batches ({@link dev.pgworkflows.sweeper.Sweeper}); the engine schedules it.
 */
package dev.pgworkflows.sweeper;
