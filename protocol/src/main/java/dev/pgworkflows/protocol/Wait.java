package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The event a continuation waits for, and the document its payload must contain. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Wait(String step, String event, ObjectNode match) {}
