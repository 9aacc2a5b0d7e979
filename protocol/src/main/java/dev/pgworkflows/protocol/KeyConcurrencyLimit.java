package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code PUT /v1/workflows/{name}/concurrency/{key}}: at most {@code limit} runs of the workflow
 * with concurrency key {@code key} hold a slot at once, in place of the workflow's own limit. The
 * answer names the workflow and the key too.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record KeyConcurrencyLimit(String workflow, String key, Integer limit) {}
