package dev.pgworkflows.engine.internal.schedule;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * A standard 5-field Unix cron expression (minute, hour, day of month, month, day of week; names
 * such as {@code MON-FRI} and {@code JAN} allowed) read in a time zone: its ticks as instants.
 * Ticks are computed in the zone's local time by cron-utils: a local time that a spring-forward
 * skips has no tick that day, and one that a fall-back repeats ticks once, at its first occurrence
 * (an expression that names every minute or every half hour ticks in both passes, each at its own
 * instant).
 */
public final class Cron {
  private static final CronParser PARSER =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));

  private final ExecutionTime times;
  private final ZoneId zone;

  private Cron(ExecutionTime times, ZoneId zone) {
    this.times = times;
    this.zone = zone;
  }

  /** Thrown for an expression or a zone that cannot be read, with the reason in plain words. */
  public static final class Invalid extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String field;

    Invalid(String field, String message) {
      super(message);
      this.field = field;
    }

    /** {@code cron} or {@code zone}. */
    public String field() {
      return field;
    }
  }

  /** Reads {@code expression} in {@code zone} (an IANA id such as Europe/Berlin, or UTC). */
  public static Cron parse(String expression, String zone) {
    ZoneId id;
    try {
      id = ZoneId.of(zone);
    } catch (DateTimeException e) {
      throw new Invalid(
          "zone", "zone \"" + zone + "\" is not a time zone id (such as UTC or Europe/Berlin)");
    }
    try {
      com.cronutils.model.Cron cron = PARSER.parse(expression.strip());
      cron.validate();
      return new Cron(ExecutionTime.forCron(cron), id);
    } catch (IllegalArgumentException e) {
      throw new Invalid(
          "cron",
          "cron \""
              + expression
              + "\" is not a 5-field cron expression (minute hour day-of-month month"
              + " day-of-week): "
              + e.getMessage());
    }
  }

  /** The first tick strictly after {@code at}; empty when there is none. */
  public Optional<Instant> next(Instant at) {
    return times.nextExecution(at.atZone(zone)).map(ZonedDateTime::toInstant);
  }

  /** The last tick at or before {@code at}; empty when there is none. */
  public Optional<Instant> latest(Instant at) {
    Instant justAfter = at.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
    return times.lastExecution(justAfter.atZone(zone)).map(ZonedDateTime::toInstant);
  }

  /** The last tick strictly before {@code at}; empty when there is none. */
  public Optional<Instant> previous(Instant at) {
    return times.lastExecution(at.atZone(zone)).map(ZonedDateTime::toInstant);
  }
}
