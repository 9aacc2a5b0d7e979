package dev.pgworkflows.workflows.internal.http;

import dev.pgworkflows.protocol.ScheduleRequest;
import dev.pgworkflows.workflows.Schedule;

/** A {@link Schedule} as the request that gives it to the server. */
public final class ScheduleRequests {
  private ScheduleRequests() {}

  /** {@code schedule} for {@code workflow} ({@code workflow} null: left out of the request). */
  public static ScheduleRequest of(Schedule schedule, String workflow, String defaultName) {
    return new ScheduleRequest(
        schedule.name().orElse(defaultName),
        workflow,
        schedule.cron(),
        schedule.zone(),
        schedule.input() == null ? null : Transport.JSON.valueToTree(schedule.input()),
        schedule.catchUp().wire(),
        schedule.maxCatchUp(),
        // Left out at their defaults: a server of the last release knows neither field.
        schedule.overlap() == Schedule.Overlap.ALLOW_ALL ? null : schedule.overlap().wire(),
        schedule.pauseAfterFailures().isPresent()
            ? Integer.valueOf(schedule.pauseAfterFailures().getAsInt())
            : null);
  }
}
