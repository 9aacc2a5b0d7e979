package dev.pgworkflows.engine.internal.checks;

import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.Names;
import dev.pgworkflows.protocol.ScheduleRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** A schedule's fields checked, and its next tick computed, before any I/O. */
public final class ScheduleChecks {
  private static final Set<String> CATCH_UP = Set.of("skip", "latest", "all");
  private static final Set<String> OVERLAP =
      Set.of("allow_all", "skip", "buffer_one", "buffer_all", "cancel_other");

  /** The most ticks one backfill runs. */
  public static final int MAX_BACKFILL = 1000;

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
    String overlap = req.overlap() == null ? "allow_all" : req.overlap();
    if (!OVERLAP.contains(overlap)) {
      throw ApiException.badRequest(
          at + "overlap",
          at
              + "overlap must be allow_all (the default), skip, buffer_one, buffer_all or"
              + " cancel_other");
    }
    if (req.pauseAfterFailures() != null) {
      WorkerChecks.range(at + "pauseAfterFailures", req.pauseAfterFailures(), 1, 1, 1000);
    }
    String input = req.input() == null || req.input().isNull() ? null : Json.write(req.input());
    return new ScheduleStore.Settings(
        name,
        workflow,
        req.cron().strip(),
        zone,
        input,
        catchUp,
        maxCatchUp,
        next,
        overlap,
        req.pauseAfterFailures());
  }

  /**
   * The ticks of {@code cron} from {@code from} (inclusive) to {@code to} (exclusive): 1 to {@link
   * #MAX_BACKFILL} of them, each a 400 naming the field otherwise, counted before any I/O.
   */
  public static List<Instant> backfill(Cron cron, Instant from, Instant to) {
    if (from == null) {
      throw ApiException.badRequest("from", "from is required, an RFC 3339 time");
    }
    if (to == null) {
      throw ApiException.badRequest("to", "to is required, an RFC 3339 time");
    }
    if (!from.isBefore(to)) {
      throw ApiException.badRequest("to", "to must come after from");
    }
    List<Instant> ticks = new ArrayList<>();
    Optional<Instant> t = cron.next(from.minusNanos(1));
    while (t.isPresent() && t.get().isBefore(to)) {
      if (ticks.size() == MAX_BACKFILL) {
        throw ApiException.badRequest(
            "to",
            "the range from "
                + from
                + " to "
                + to
                + " holds more than "
                + MAX_BACKFILL
                + " ticks; backfill it in parts");
      }
      ticks.add(t.get());
      t = cron.next(t.get());
    }
    if (ticks.isEmpty()) {
      throw ApiException.badRequest(
          "from", "the range from " + from + " to " + to + " holds no tick");
    }
    return ticks;
  }
}
