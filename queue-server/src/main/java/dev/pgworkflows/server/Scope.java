package dev.pgworkflows.server;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * What a bearer token may do. Each route of the API needs exactly one scope (openapi.yaml says
 * which, as {@code x-scope}); a token holds any set of them.
 */
public enum Scope {
  /** Lists and reads: queues, dead letters, subscriptions, workflows, runs, journals. */
  READ,
  /** Starts and feeds runs: start, signal, send, publish. */
  START,
  /**
   * The worker protocol and queue consumers: poll, stream, complete, retry, lease, receive, ack.
   */
  WORKER,
  /** Operator actions: cancel, purge, create and delete queues, redrive, subscriptions, audit. */
  ADMIN;

  /** The scope's name in configuration, openapi.yaml and error messages: {@code read}... */
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The scope named {@code wire}; throws naming the valid ones when there is none. */
  public static Scope of(String wire) {
    for (Scope s : values()) {
      if (s.wire().equals(wire)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "unknown scope \""
            + wire
            + "\" (scopes are "
            + Arrays.stream(values()).map(Scope::wire).collect(Collectors.joining(", "))
            + ")");
  }
}
