package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.regex.Pattern;

/**
 * A schedule as a client gives it: {@code POST /v1/schedules} (with its name), {@code PUT
 * /v1/schedules/{name}}, or one item of a worker's {@code POST /v1/workflows/{name}/schedules}
 * (without a workflow). Absent: zone {@code UTC}, input none, catch-up {@code skip}, maxCatchUp
 * 100, overlap {@code allow_all} (what a tick does while the schedule's last run still runs: {@code
 * allow_all}, {@code skip}, {@code buffer_one}, {@code buffer_all}, {@code cancel_other}),
 * pauseAfterFailures none (the failed runs in a row that pause the schedule).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ScheduleRequest(
    String name,
    String workflow,
    String cron,
    String zone,
    JsonNode input,
    String catchUp,
    Integer maxCatchUp,
    String overlap,
    Integer pauseAfterFailures) {

  /** A request without an overlap policy or a pause after failures. */
  public ScheduleRequest(
      String name,
      String workflow,
      String cron,
      String zone,
      JsonNode input,
      String catchUp,
      Integer maxCatchUp) {
    this(name, workflow, cron, zone, input, catchUp, maxCatchUp, null, null);
  }

  private static final Pattern NAME = Pattern.compile("[a-z0-9_-]{1,64}");

  /** 1 to 64 characters of a-z, 0-9, "_" and "-". */
  public static boolean isScheduleName(String name) {
    return name != null && NAME.matcher(name).matches();
  }
}
