package dev.pgworkflows.sql;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Puts the seed of a failed property in its failure message, where the build log shows it (jqwik's
 * own report, with the seed, goes to the test's output file).
 */
public final class SeedInFailure implements AroundPropertyHook {
  @Override
  public PropertyExecutionResult aroundProperty(
      PropertyLifecycleContext context, PropertyExecutor property) {
    PropertyExecutionResult result = property.execute();
    if (result.status() != PropertyExecutionResult.Status.FAILED || result.seed().isEmpty()) {
      return result;
    }
    String seed = result.seed().get();
    Throwable cause = result.throwable().orElse(null);
    AssertionError failure =
        new AssertionError(
            "seed "
                + seed
                + " (run again with -Dmodel.seed="
                + seed
                + ", see docs/guarantees.md, \"Property tests\")\n"
                + (cause == null ? "" : cause.getMessage()),
            cause);
    return result.mapToFailed(failure);
  }
}
