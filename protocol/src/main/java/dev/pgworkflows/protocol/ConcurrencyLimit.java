package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * {@code PUT /v1/workflows/{name}/concurrency}: at most {@code limit} runs of each concurrency key
 * of the workflow hold a slot at once; a null limit removes it. The answer names the workflow too,
 * and a read lists the keys with a limit of their own ({@code keys}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConcurrencyLimit(String workflow, Integer limit, List<KeyConcurrencyLimit> keys) {

  /** A limit without the keys' own. */
  public ConcurrencyLimit(String workflow, Integer limit) {
    this(workflow, limit, null);
  }
}
