package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.regex.Pattern;

/**
 * A schedule as a client gives it: {@code POST /v1/schedules} (with its name), {@code PUT
 * /v1/schedules/{name}}, or one item of a worker's {@code POST /v1/workflows/{name}/schedules}
 * (without a workflow). Absent: zone {@code UTC}, input none, catch-up {@code skip}, maxCatchUp
 * 100.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ScheduleRequest(
    String name,
    String workflow,
    String cron,
    String zone,
    JsonNode input,
    String catchUp,
    Integer maxCatchUp) {

  private static final Pattern NAME = Pattern.compile("[a-z0-9_-]{1,64}");

  /** 1 to 64 characters of a-z, 0-9, "_" and "-". */
  public static boolean isScheduleName(String name) {
    return name != null && NAME.matcher(name).matches();
  }
}
