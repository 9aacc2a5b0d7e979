package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.ScheduleRequest;
import dev.pgworkflows.workflows.internal.http.ScheduleRequests;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The server's schedules ({@link WorkflowClient#schedules()}): listed and read with scope {@code
 * read}, made, changed, paused, resumed, backfilled and deleted with scope {@code admin}. A
 * schedule's name is {@link Schedule#name}, its workflow's name when it has none.
 */
public final class Schedules {
  private final Transport transport;

  Schedules(Transport transport) {
    this.transport = transport;
  }

  /** Every schedule, by name. */
  public List<ScheduleInfo> list() {
    JsonNode r = transport.get("/v1/schedules");
    JavaType listType =
        Transport.JSON.getTypeFactory().constructCollectionType(List.class, ScheduleInfo.class);
    return Transport.JSON.convertValue(r.get("schedules"), listType);
  }

  /** The schedule of that name, if there is one. */
  public Optional<ScheduleInfo> get(String name) {
    try {
      return Optional.of(Transport.read(transport.get(path(name)), ScheduleInfo.class));
    } catch (ApiException e) {
      if (e.status() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /**
   * Makes a schedule starting runs of {@code workflow}; its first tick is the first after now. An
   * {@link ApiException} with status 409 when the name is taken, 400 for an expression or zone the
   * server cannot read.
   */
  public ScheduleInfo create(String workflow, Schedule schedule) {
    Workflow.checkName(workflow);
    ScheduleRequest body = ScheduleRequests.of(schedule, workflow, workflow);
    return Transport.read(transport.post("/v1/schedules", body), ScheduleInfo.class);
  }

  /**
   * Replaces the settings of the schedule named by {@code schedule}: a new expression or zone moves
   * its next tick to the first after now. 404 when there is none.
   */
  public ScheduleInfo update(String workflow, Schedule schedule) {
    Workflow.checkName(workflow);
    ScheduleRequest body = ScheduleRequests.of(schedule, workflow, workflow);
    return Transport.read(
        transport.send("PUT", path(body.name()), body, Duration.ofSeconds(30)), ScheduleInfo.class);
  }

  /** Stops the schedule starting runs until it is resumed. */
  public ScheduleInfo pause(String name) {
    return Transport.read(transport.post(path(name) + "/pause", null), ScheduleInfo.class);
  }

  /** Resumes the schedule from its first tick after now (ticks of the pause are not caught up). */
  public ScheduleInfo resume(String name) {
    return Transport.read(transport.post(path(name) + "/resume", null), ScheduleInfo.class);
  }

  /**
   * Runs the schedule's ticks from {@code from} (inclusive) to {@code to} (exclusive) now, as if at
   * their ticks, under its overlap policy: 1 to 1000 ticks, an {@link ApiException} with status 400
   * otherwise (nothing done), 404 when there is no such schedule. A tick that ran before answers
   * its run. Needs scope {@code admin}.
   */
  public List<BackfillTick> backfill(String name, Instant from, Instant to) {
    if (from == null || to == null) {
      throw new IllegalArgumentException("from and to must not be null");
    }
    JsonNode r =
        transport.post(
            path(name) + "/backfill", Map.of("from", from.toString(), "to", to.toString()));
    JavaType listType =
        Transport.JSON.getTypeFactory().constructCollectionType(List.class, BackfillTick.class);
    return Transport.JSON.convertValue(r.get("ticks"), listType);
  }

  /** Deletes the schedule (the runs it started are left alone); false when there was none. */
  public boolean delete(String name) {
    try {
      transport.delete(path(name));
      return true;
    } catch (ApiException e) {
      if (e.status() == 404) {
        return false;
      }
      throw e;
    }
  }

  private static String path(String name) {
    if (!ScheduleRequest.isScheduleName(name)) {
      throw new IllegalArgumentException(
          "schedule name \"" + name + "\" must be 1 to 64 characters of a-z, 0-9, \"_\" and \"-\"");
    }
    return "/v1/schedules/" + name;
  }
}
