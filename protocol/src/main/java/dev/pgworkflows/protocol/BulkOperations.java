package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** A page of bulk operations, newest first; {@code nextCursor} when more may follow. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BulkOperations(List<BulkOperation> batches, String nextCursor) {}
