package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.workflows.Branch;
import dev.pgworkflows.workflows.RateLimited;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.function.Consumer;

/**
 * The attempts of one parallel branch, in the branch's own thread: a failing attempt is retried per
 * the branch's {@link dev.pgworkflows.workflows.Retry}, its backoff slept in the thread while the
 * group's heartbeat holds the lease. Ends with the step's record (its output, or its error once out
 * of attempts), or with none when the run's lease was lost meanwhile or the branch was rate-limited
 * (not an attempt: the group hands the run back once its other branches are journaled).
 */
final class BranchAttempts {
  private final StepTracing tracing;
  private final CancellationFlag cancellation;
  private final InstantSource clock;
  private final CompletionHook hook;
  private final WorkerCounters counters;

  BranchAttempts(
      StepTracing tracing,
      CancellationFlag cancellation,
      InstantSource clock,
      CompletionHook hook,
      WorkerCounters counters) {
    this.tracing = tracing;
    this.cancellation = cancellation;
    this.clock = clock;
    this.hook = hook;
    this.counters = counters;
  }

  /**
   * The branch's record to journal, or null when there is nothing to journal: the lease was lost,
   * or the branch was rate-limited ({@link dev.pgworkflows.workflows.RateLimited}), which is then
   * given to {@code heldBack} with how long its key is to be held back.
   */
  StepRecord run(Branch<?> branch, Consumer<Duration> heldBack) {
    String name = branch.name();
    for (int attempt = 1; ; attempt++) {
      Instant started = clock.instant();
      Span span = tracing.start(name, "run", attempt);
      Throwable failure;
      Scope scope = span.makeCurrent();
      try {
        Object value = StepTimeout.call(name, branch.code(), branch.retry().timeout());
        JsonNode output = Transport.JSON.valueToTree(value);
        counters.stepsSucceeded.increment();
        hook.stepReturned(name);
        return new StepRecord(name, "run", output, null, started);
      } catch (Suspend s) {
        return null;
      } catch (Throwable t) {
        counters.stepsFailed.increment();
        span.recordException(t);
        span.setStatus(StatusCode.ERROR);
        failure = t;
      } finally {
        scope.close();
        span.end();
      }
      if (cancellation.isCancelled()) {
        return null;
      }
      RateLimited limited = StepExecution.rateLimited(failure);
      if (limited != null) {
        heldBack.accept(limited.retryAfter());
        return null;
      }
      if (!branch.retry().retries(attempt, failure)) {
        return new StepRecord(name, "run", null, StepErrors.json(failure, name), started);
      }
      if (backoffCut(branch.retry().delayAfter(attempt))) {
        return null;
      }
    }
  }

  /** Sleeps a retry's backoff; true when the lease was lost (or the thread stopped) meanwhile. */
  private boolean backoffCut(Duration delay) {
    try {
      return cancellation.await(delay);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }
}
