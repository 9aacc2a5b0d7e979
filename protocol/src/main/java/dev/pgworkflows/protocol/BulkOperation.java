package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/**
 * A bulk operation: its action on the runs its query selected ({@code selected} when it was made),
 * how far it has come ({@code done}, {@code skipped}, {@code failed}), and its status: running,
 * completed or cancelled.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BulkOperation(
    long batchId,
    String action,
    String query,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String params,
    String status,
    long selected,
    long done,
    long skipped,
    long failed,
    int ratePerSecond,
    String createdBy,
    Instant createdAt,
    Instant updatedAt,
    Instant finishedAt) {}
