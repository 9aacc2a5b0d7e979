package dev.pgworkflows.sql;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Runs a property with the seed given as {@code -Dmodel.seed=...} (a failure's seed, see {@link
 * SeedInFailure}), so a failing sequence replays from the command line with no edit; without it,
 * the property runs as configured.
 */
public final class SeedFromCommandLine implements AroundPropertyHook {
  @Override
  public PropertyExecutionResult aroundProperty(
      PropertyLifecycleContext context, PropertyExecutor property) {
    String seed = System.getProperty("model.seed", "").strip();
    if (!seed.isEmpty()) {
      context.attributes().setSeed(seed);
    }
    return property.execute();
  }
}
