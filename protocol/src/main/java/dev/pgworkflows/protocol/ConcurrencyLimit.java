package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * {@code PUT /v1/workflows/{name}/concurrency}: at most {@code limit} runs of each concurrency key
 * of the workflow hold a slot at once; a null limit removes it. {@code strategy} says what a start
 * of a full key does ({@code queue}, the default, {@code cancel_in_progress}, {@code cancel_newest}
 * or {@code skip}); {@code limitFrom}, a JSON path into a run's input, gives each run's key its
 * limit from the value there, through {@code limits} (value to limit) when given. {@code
 * totalLimit} caps the runs of all keys at once, admitting waiting runs round-robin by key,
 * weighted by {@code weights} (key to weight, 1 by default). The answer names the workflow too, and
 * a read lists the keys with a limit of their own ({@code keys}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConcurrencyLimit(
    String workflow,
    Integer limit,
    String strategy,
    String limitFrom,
    Map<String, Integer> limits,
    Integer totalLimit,
    Map<String, Integer> weights,
    List<KeyConcurrencyLimit> keys) {

  /** A limit with the queue strategy, without the keys' own. */
  public ConcurrencyLimit(String workflow, Integer limit) {
    this(workflow, limit, null, null, null, null, null, null);
  }

  /** These settings, named for {@code workflow}, with the keys' own limits. */
  public ConcurrencyLimit of(String workflow, List<KeyConcurrencyLimit> keys) {
    return new ConcurrencyLimit(
        workflow, limit, strategy, limitFrom, limits, totalLimit, weights, keys);
  }
}
