package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.store.CallbackStore;
import dev.pgworkflows.protocol.Names;
import java.util.List;

/**
 * Callback URLs: a worker mints a run's callback, anyone holding its token completes it once, an
 * operator rotates the key tokens are minted under. Bad input is a 400 naming the field before any
 * I/O; a token that is not one is a 404, one used, late or of an ended run a 410.
 */
public final class CallbackCalls {
  public static final long MIN_TIMEOUT_MS = 1_000;
  public static final long MAX_TIMEOUT_MS = 31_536_000_000L;

  private final CallbackStore store;
  private final RunCalls runs;

  public CallbackCalls(CallbackStore store, RunCalls runs) {
    this.store = store;
    this.runs = runs;
  }

  /** Mints callback {@code callback} of run {@code runId} of workflow {@code name}. */
  public CallbackStore.Minted create(String name, long runId, String callback, Long timeoutMs) {
    if (!Names.isStepName(callback)) {
      throw ApiException.badRequest(
          "callback",
          "callback must be 1 to 128 characters of a-z, A-Z, 0-9, \".\", \"_\" and \"-\"");
    }
    if (timeoutMs == null || timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS) {
      throw ApiException.badRequest(
          "timeoutMs",
          "timeoutMs must be between "
              + MIN_TIMEOUT_MS
              + " and "
              + MAX_TIMEOUT_MS
              + ", got "
              + timeoutMs);
    }
    runs.run(name, runId);
    return store.create(runId, callback, timeoutMs);
  }

  /** Completes (or, {@code ok} false, rejects) the callback {@code token} names. */
  public CallbackStore.Resolved resolve(String token, boolean ok, String body) {
    CallbackStore.Resolved r = store.resolve(token, ok, body);
    return switch (r.outcome()) {
      case "invalid" -> throw ApiException.notFound("no such callback");
      case "gone" ->
          throw new ApiException(
              410, "this callback has been used, its time has passed, or its run has ended");
      default -> r;
    };
  }

  /** The callbacks of run {@code runId} of workflow {@code name}. */
  public List<CallbackStore.Callback> list(String name, long runId) {
    runs.run(name, runId);
    return store.list(runId);
  }

  /** Makes a new key the one new callbacks are minted under; answers its id. */
  public int rotateKey() {
    return store.rotateKey();
  }
}
