package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import java.time.Instant;

/**
 * {@code GET /v1/workflows/{name}/runs/{runId}/journal-tail}: the rows of a run's journal a worker
 * lacks, which holds it up to the row {@code afterSeq} written at {@code afterCompletedAt}: the
 * rows after that one, or the whole journal ({@code whole}) when that row is no longer there as it
 * was (the run was restarted from an earlier step) or none was given.
 *
 * @param journal the rows, as in a task's journal
 * @param lastSeq the seq of the journal's last row, null when the journal is empty: with {@code
 *     lastCompletedAt}, what the worker names in its next ask
 */
public record JournalTail(
    boolean whole,
    @JsonRawValue @JsonDeserialize(using = RawJson.class) String journal,
    Integer lastSeq,
    Instant lastCompletedAt) {}
