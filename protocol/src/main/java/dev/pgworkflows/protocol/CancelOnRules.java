package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * {@code PUT /v1/workflows/{name}/cancel-on}: a workflow's cancel-on rules, all of them (an empty
 * list removes them), as its workers set them from its definition. The answer names the workflow.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CancelOnRules(String workflow, List<CancelOnRule> rules) {}
