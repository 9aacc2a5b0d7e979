package dev.pgworkflows.protocol;

import java.util.List;

/** A batch of starts' answer: one per item, in the order given. */
public record StartBatchAnswers(List<StartAnswer> runs) {}
