package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.ScheduleChecks;
import dev.pgworkflows.engine.internal.schedule.Cron;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.Backfill;
import dev.pgworkflows.protocol.BackfillRequest;
import dev.pgworkflows.protocol.ScheduleState;
import java.time.Instant;
import java.util.List;

/**
 * A schedule's past ticks run now, as if at their ticks: the ticks of its cron in the range,
 * counted before any I/O (at most {@link ScheduleChecks#MAX_BACKFILL}), each taken under the
 * schedule's overlap policy ({@code queue.schedule_backfill}) in one transaction.
 */
public final class Backfills {
  private final ScheduleStore store;
  private final int maxRetentionDays;
  private final WorkflowEvents events;

  public Backfills(ScheduleStore store, int maxRetentionDays, WorkflowEvents events) {
    this.store = store;
    this.maxRetentionDays = maxRetentionDays;
    this.events = events;
  }

  /** Backfills schedule {@code name} over {@code req}'s range; 404 when there is none. */
  public Backfill run(String name, BackfillRequest req) {
    ScheduleState s =
        store
            .get(name)
            .orElseThrow(() -> ApiException.notFound("schedule \"" + name + "\" does not exist"));
    List<Instant> ticks =
        ScheduleChecks.backfill(Cron.parse(s.cron(), s.zone()), req.from(), req.to());
    List<Backfill.Tick> done = store.backfill(name, ticks, maxRetentionDays);
    if (done.stream().anyMatch(t -> Boolean.TRUE.equals(t.created()))) {
      events.started(s.workflow());
    }
    return new Backfill(name, done);
  }
}
