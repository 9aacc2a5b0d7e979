package dev.pgworkflows.protocol;

import java.util.List;

/** A list of schedules: {@code GET /v1/schedules}, and the answer to a worker's registration. */
public record Schedules(List<ScheduleState> schedules) {}
