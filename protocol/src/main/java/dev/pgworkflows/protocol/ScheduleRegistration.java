package dev.pgworkflows.protocol;

import java.util.List;

/**
 * A worker's schedules of one workflow, from its definition: {@code POST
 * /v1/workflows/{name}/schedules}. Each is made when absent and changed when it differs; schedules
 * missing from the list are left alone.
 */
public record ScheduleRegistration(List<ScheduleRequest> schedules) {}
