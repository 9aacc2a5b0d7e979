package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.RunResult;
import dev.pgworkflows.protocol.StepRecord;

/** A completion whose fields were checked, ready for the database. */
public record StepCompletion(
    long runId,
    long messageId,
    long receipt,
    StepRecord step,
    Next next,
    RunResult result,
    int lease,
    Double stepSeconds) {}
