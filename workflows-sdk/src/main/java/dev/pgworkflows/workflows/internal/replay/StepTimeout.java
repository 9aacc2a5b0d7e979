package dev.pgworkflows.workflows.internal.replay;

import dev.pgworkflows.workflows.StepContext;
import dev.pgworkflows.workflows.StepTimeoutException;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a step's attempt within its timeout. Without one the code runs on the caller's thread. With
 * one it runs on a daemon thread of its own while the caller waits: when the time is up the caller
 * interrupts it and goes on with a {@link StepTimeoutException}, so a step that ignores interrupts
 * is abandoned all the same and whatever it returns later goes nowhere.
 */
final class StepTimeout {
  private StepTimeout() {}

  static <T> T call(String name, StepContext.Fn<T> step, Duration timeout) throws Throwable {
    // Each call is one attempt: its stream writes count from 0 (the same identities on a retry),
    // and a thread it leaves running writes no more once the call is over.
    RunStreams.Attempt attempt = new RunStreams.Attempt(name);
    try {
      return run(name, attempt.wrap(step), timeout);
    } finally {
      attempt.end();
    }
  }

  private static <T> T run(String name, StepContext.Fn<T> fn, Duration timeout) throws Throwable {
    if (timeout == null) {
      return fn.call();
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    Runnable attempt =
        Context.current()
            .wrap(
                () -> {
                  try {
                    result.complete(fn.call());
                  } catch (Throwable t) {
                    result.completeExceptionally(t);
                  }
                });
    Thread thread = new Thread(attempt, "step-" + name);
    thread.setDaemon(true);
    thread.start();
    try {
      return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      thread.interrupt();
      throw new StepTimeoutException(name, timeout);
    } catch (ExecutionException e) {
      throw e.getCause();
    } catch (InterruptedException e) {
      thread.interrupt();
      Thread.currentThread().interrupt();
      throw e;
    }
  }
}
