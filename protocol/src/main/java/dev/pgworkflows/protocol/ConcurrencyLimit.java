package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code PUT /v1/workflows/{name}/concurrency}: at most {@code limit} runs of each concurrency key
 * of the workflow hold a slot at once; a null limit removes it. The answer names the workflow too.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ConcurrencyLimit(String workflow, Integer limit) {}
