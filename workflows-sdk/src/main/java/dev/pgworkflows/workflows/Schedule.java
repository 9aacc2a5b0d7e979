package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.pgworkflows.protocol.ScheduleRequest;
import java.time.ZoneId;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * When the server starts runs of a workflow: a standard 5-field Unix cron expression (minute, hour,
 * day of month, month, day of week; names such as {@code MON-FRI}) read in a time zone. Immutable:
 * each method returns a new schedule.
 *
 * <pre>{@code
 * Workflow<Report, String> report = Workflow.define("report", Report.class, String.class)
 *     .schedule(Schedule.cron("0 9 * * MON-FRI").zone("Europe/Berlin").input(new Report("pdf")))
 *     .run((ctx, in) -> ...);
 * }</pre>
 *
 * <p>The server checks the expression and the zone (an {@link ApiException} with status 400 names
 * the field). Each tick starts one run, whose input is the schedule's input with {@code
 * scheduledAt} set to the tick (an ISO instant in UTC) when the input is an object or absent: an
 * input record with a field {@code Instant scheduledAt} reads it.
 */
public final class Schedule {
  /** What the server does with ticks missed while no server ran, or reached over a minute late. */
  public enum CatchUp {
    /** Starts no run for them; the schedule goes on from its next tick. The default. */
    SKIP,
    /** Starts one run, for the newest missed tick. */
    LATEST,
    /**
     * Starts a run for each missed tick, oldest first, at most {@link #maxCatchUp} (the newest).
     */
    ALL;

    @JsonValue
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static CatchUp of(String wire) {
      return valueOf(wire.toUpperCase(Locale.ROOT));
    }
  }

  /** What a tick does while the schedule's last run still runs. */
  public enum Overlap {
    /** Starts another run. The default. */
    ALLOW_ALL,
    /** Starts no run for the tick. */
    SKIP,
    /** Starts it once the running run ends; one such tick is kept, later ones are skipped. */
    BUFFER_ONE,
    /** Starts each such tick in turn, one run after another (up to 1000 kept). */
    BUFFER_ALL,
    /** Cancels the running run and starts the tick's. */
    CANCEL_OTHER;

    @JsonValue
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static Overlap of(String wire) {
      return valueOf(wire.toUpperCase(Locale.ROOT));
    }
  }

  private final String name;
  private final String cron;
  private final String zone;
  private final Object input;
  private final CatchUp catchUp;
  private final int maxCatchUp;
  private final Overlap overlap;
  private final Integer pauseAfterFailures;

  private Schedule(
      String name,
      String cron,
      String zone,
      Object input,
      CatchUp catchUp,
      int maxCatchUp,
      Overlap overlap,
      Integer pauseAfterFailures) {
    this.name = name;
    this.cron = cron;
    this.zone = zone;
    this.input = input;
    this.catchUp = catchUp;
    this.maxCatchUp = maxCatchUp;
    this.overlap = overlap;
    this.pauseAfterFailures = pauseAfterFailures;
  }

  /** A schedule ticking at {@code expression}, in UTC, with no input, skipping missed ticks. */
  public static Schedule cron(String expression) {
    if (expression == null || expression.isBlank()) {
      throw new IllegalArgumentException("cron must be an expression such as \"0 9 * * *\"");
    }
    return new Schedule(
        null, expression.strip(), "UTC", null, CatchUp.SKIP, 100, Overlap.ALLOW_ALL, null);
  }

  /**
   * Reads the expression in {@code zone}, an IANA id such as {@code Europe/Berlin}; throws {@link
   * java.time.DateTimeException} for an id the JVM does not know.
   */
  public Schedule zone(String zone) {
    return zone(ZoneId.of(zone));
  }

  /** Reads the expression in {@code zone}. */
  public Schedule zone(ZoneId zone) {
    return new Schedule(
        name, cron, zone.getId(), input, catchUp, maxCatchUp, overlap, pauseAfterFailures);
  }

  /** The runs' input (serialised as JSON), in which each run's {@code scheduledAt} is set. */
  public Schedule input(Object input) {
    return new Schedule(name, cron, zone, input, catchUp, maxCatchUp, overlap, pauseAfterFailures);
  }

  public Schedule catchUp(CatchUp catchUp) {
    if (catchUp == null) {
      throw new IllegalArgumentException("catchUp must not be null");
    }
    return new Schedule(name, cron, zone, input, catchUp, maxCatchUp, overlap, pauseAfterFailures);
  }

  /** How many missed ticks {@link CatchUp#ALL} runs at most (1 to 1000, default 100). */
  public Schedule maxCatchUp(int max) {
    if (max < 1 || max > 1000) {
      throw new IllegalArgumentException("maxCatchUp must be between 1 and 1000, got " + max);
    }
    return new Schedule(name, cron, zone, input, catchUp, max, overlap, pauseAfterFailures);
  }

  /**
   * What a tick does while the schedule's last run still runs (default {@link Overlap#ALLOW_ALL}).
   */
  public Schedule overlap(Overlap overlap) {
    if (overlap == null) {
      throw new IllegalArgumentException("overlap must not be null");
    }
    return new Schedule(name, cron, zone, input, catchUp, maxCatchUp, overlap, pauseAfterFailures);
  }

  /**
   * Pauses the schedule once {@code n} of its runs in a row failed (1 to 1000; default never),
   * counted as each run ends and the next tick comes; a resume counts from 0 again.
   */
  public Schedule pauseAfterFailures(int n) {
    if (n < 1 || n > 1000) {
      throw new IllegalArgumentException("pauseAfterFailures must be between 1 and 1000, got " + n);
    }
    return new Schedule(name, cron, zone, input, catchUp, maxCatchUp, overlap, n);
  }

  public Overlap overlap() {
    return overlap;
  }

  /** The failed runs in a row that pause the schedule; empty for never. */
  public OptionalInt pauseAfterFailures() {
    return pauseAfterFailures == null ? OptionalInt.empty() : OptionalInt.of(pauseAfterFailures);
  }

  /**
   * The schedule's name, unique on the server: 1 to 64 characters of a-z, 0-9, "_" and "-". Without
   * one, the workflow's name.
   */
  public Schedule name(String name) {
    if (!ScheduleRequest.isScheduleName(name)) {
      throw new IllegalArgumentException(
          "schedule name \"" + name + "\" must be 1 to 64 characters of a-z, 0-9, \"_\" and \"-\"");
    }
    return new Schedule(name, cron, zone, input, catchUp, maxCatchUp, overlap, pauseAfterFailures);
  }

  /** The name given; empty when the schedule takes its workflow's. */
  public Optional<String> name() {
    return Optional.ofNullable(name);
  }

  public String cron() {
    return cron;
  }

  public String zone() {
    return zone;
  }

  /** The input given (null when none). */
  public Object input() {
    return input;
  }

  public CatchUp catchUp() {
    return catchUp;
  }

  public int maxCatchUp() {
    return maxCatchUp;
  }

  @Override
  public String toString() {
    return "Schedule["
        + (name == null ? "" : name + ": ")
        + cron
        + " "
        + zone
        + ", "
        + catchUp
        + (overlap == Overlap.ALLOW_ALL ? "" : ", overlap " + overlap)
        + (pauseAfterFailures == null ? "" : ", pause after " + pauseAfterFailures + " failures")
        + "]";
  }
}
