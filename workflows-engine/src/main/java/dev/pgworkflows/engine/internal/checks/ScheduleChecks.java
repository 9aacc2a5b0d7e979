package dev.pgworkflows.engine.internal.checks;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.ScheduleRequest;
import java.time.Instant;
import java.util.Set;

/** A schedule's fields checked, and its next tick computed, before any I/O. */
public final class ScheduleChecks {
  private static final Set<String> CATCH_UP = Set.of("skip", "latest", "all");

  private ScheduleChecks() {}

  /**
   * The schedule {@code name} of {@code workflow} as {@code req} describes it, with its next tick
   * after {@code now}; each failure a 400 naming the field, prefixed with {@code at}.
   */
  public static ScheduleStore.Settings check(
      ScheduleRequest req, String name, String workflow, String at, Instant now) {
    if (!ScheduleRequest.isScheduleName(name)) {
      throw ApiException.badRequest(
          at + "name", at + "name must be 1 to 64 characters of a-z, 0-9, \"_\" and \"-\"");
    }
    if (workflow == null) {
      throw ApiException.badRequest(at + "workflow", at + "workflow is required");
    }
    if (!Names.isWorkflowName(workflow)) {
      throw ApiException.badRequest(
          at + "workflow",
          at
              + "workflow must be a workflow name: 1 to 43 characters of a-z, 0-9, \"_\" and"
              + " \"-\", not starting with \"-\"");
    }
    if (req.cron() == null || req.cron().isBlank()) {
      throw ApiException.badRequest(at + "cron", at + "cron is required, such as \"0 9 * * *\"");
    }
    if (req.cron().length() > 256) {
      throw ApiException.badRequest(at + "cron", at + "cron must be at most 256 characters");
    }
    String zone = req.zone() == null ? "UTC" : req.zone();
    if (zone.isEmpty() || zone.length() > 64) {
      throw ApiException.badRequest(at + "zone", at + "zone must be 1 to 64 characters");
    }
    String catchUp = req.catchUp() == null ? "skip" : req.catchUp();
    if (!CATCH_UP.contains(catchUp)) {
      throw ApiException.badRequest(
          at + "catchUp", at + "catchUp must be skip (the default), latest or all");
    }
    int maxCatchUp = WorkerChecks.range(at + "maxCatchUp", req.maxCatchUp(), 100, 1, 1000);
    Cron cron;
    try {
      cron = Cron.parse(req.cron(), zone);
    } catch (Cron.Invalid e) {
      throw ApiException.badRequest(
          at + e.field(), at.isEmpty() ? e.getMessage() : at + e.getMessage());
    }
    Instant next =
        cron.next(now)
            .orElseThrow(
                () ->
                    ApiException.badRequest(
                        at + "cron", at + "cron \"" + req.cron() + "\" never ticks again"));
    String input = req.input() == null || req.input().isNull() ? null : Json.write(req.input());
    return new ScheduleStore.Settings(
        name, workflow, req.cron().strip(), zone, input, catchUp, maxCatchUp, next);
  }
}
