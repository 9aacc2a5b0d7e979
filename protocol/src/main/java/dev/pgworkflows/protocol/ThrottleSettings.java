package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code PUT /v1/workflows/{name}/throttle}: at most {@code limit} starts of the workflow per
 * {@code periodMs}, {@code burst} of them at once, for the whole workflow or for each concurrency
 * key ({@code perKey}); starts beyond the rate wait their turn. A null limit removes it. The answer
 * names the workflow too.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ThrottleSettings(
    String workflow, Integer limit, Long periodMs, Integer burst, Boolean perKey) {}
