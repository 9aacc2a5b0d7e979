package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

/**
 * A run's search attributes as a JSON object of names to values: in a request, those to set (a null
 * value removes one); in an answer, all the run has.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunAttributes(
    Long runId, @JsonRawValue @JsonDeserialize(using = RawJson.class) String attributes) {}
