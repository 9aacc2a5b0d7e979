package dev.pgworkflows.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;

/** The step a completion journals: its name, kind (run, sleep, wait), and output or error. */
public record StepRecord(
    String name, String kind, JsonNode output, JsonNode error, Instant startedAt) {}
