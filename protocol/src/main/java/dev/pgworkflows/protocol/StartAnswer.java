package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * One item's answer in a batch of starts: the run, or why the item was rejected. Told apart by
 * their fields (no type field is written).
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.DEDUCTION)
@JsonSubTypes({@JsonSubTypes.Type(StartResult.class), @JsonSubTypes.Type(Rejected.class)})
public sealed interface StartAnswer permits StartResult, Rejected {}
