package dev.pgworkflows.engine.internal.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * What a due schedule does now: the ticks to start runs for (oldest first) and its next tick (null
 * when the expression has none). The ticks due are those from the stored next tick up to now; one
 * tick due on time starts its run whatever the policy. After downtime, when several are due or the
 * one due is over {@link #ON_TIME} late, the catch-up policy decides: {@code skip} starts none of
 * the late ones, {@code latest} the newest, {@code all} the newest {@code maxCatchUp} of them.
 */
public record TickPlan(List<Instant> ticks, Instant next) {
  /** How late a tick may be and still count as on time rather than missed. */
  public static final Duration ON_TIME = Duration.ofMinutes(1);

  public static TickPlan of(Cron cron, String catchUp, int maxCatchUp, Instant due, Instant now) {
    Instant next = cron.next(now).orElse(null);
    Optional<Instant> newest = cron.latest(now).filter(t -> !t.isBefore(due));
    if (newest.isEmpty()) {
      return new TickPlan(List.of(), next);
    }
    Instant latest = newest.get();
    boolean onTime = !latest.isBefore(now.minus(ON_TIME));
    return switch (catchUp) {
      case "all" -> new TickPlan(newestOf(cron, latest, due, maxCatchUp), next);
      case "latest" -> new TickPlan(List.of(latest), next);
      default -> new TickPlan(onTime ? List.of(latest) : List.of(), next);
    };
  }

  /** Up to {@code n} ticks from {@code due} to {@code latest}, the newest ones, oldest first. */
  private static List<Instant> newestOf(Cron cron, Instant latest, Instant due, int n) {
    Deque<Instant> ticks = new ArrayDeque<>();
    Instant t = latest;
    while (t != null && !t.isBefore(due) && ticks.size() < n) {
      ticks.addFirst(t);
      t = cron.previous(t).orElse(null);
    }
    return List.copyOf(ticks);
  }
}
