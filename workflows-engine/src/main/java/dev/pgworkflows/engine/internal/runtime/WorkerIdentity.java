package dev.pgworkflows.engine.internal.runtime;

/**
 * Who a worker says it is: its id, its host, and its slots (null when it did not say). A worker
 * that says nothing is known by its address.
 */
public record WorkerIdentity(String id, String host, Integer slots) {}
