package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * A parent run's step starting its child: the child's workflow, input and version, and what a
 * cancel of the parent does to it ({@code cancel}, the default, or {@code abandon}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ChildStartRequest(
    String step,
    String workflow,
    JsonNode input,
    Integer version,
    String onParentCancel,
    Integer retentionDays) {}
