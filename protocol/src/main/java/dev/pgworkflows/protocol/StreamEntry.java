package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/** One entry of a run's stream: its offset (dense from 0), its value as JSON text, its time. */
public record StreamEntry(
    long offset,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String value,
    Instant writtenAt) {}
