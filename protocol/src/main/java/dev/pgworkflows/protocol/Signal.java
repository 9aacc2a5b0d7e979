package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/** A signal a run was sent: buffered while {@code deliveredAt} is absent, else taken by a wait. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Signal(
    long signalId,
    String event,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String payload,
    String idempotencyKey,
    Instant sentAt,
    Instant deliveredAt,
    String deliveredTo) {}
