package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.List;

/** What a backfill did with each tick of its range, in order. */
public record Backfill(String schedule, List<Tick> ticks) {

  public Backfill {
    ticks = List.copyOf(ticks);
  }

  /**
   * One tick: {@code started} (its run, {@code created} false when the tick had run before), {@code
   * buffered} behind the schedule's running run, or {@code skipped}.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Tick(Instant tick, String outcome, Long runId, Boolean created) {}
}
