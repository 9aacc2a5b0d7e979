package dev.pgworkflows.engine.internal.store;

import dev.pgworkflows.protocol.Backfill;
import dev.pgworkflows.protocol.ScheduleState;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

/** The schedules' functions ({@code sql/functions/schedules.sql}). */
public final class ScheduleStore {
  /** A schedule's settings as the functions take them; {@code inputJson} null for no input. */
  public record Settings(
      String name,
      String workflow,
      String cron,
      String zone,
      String inputJson,
      String catchUp,
      int maxCatchUp,
      Instant nextTick,
      String overlap,
      Integer pauseAfterFailures) {}

  /** A run a tick started (or found started, {@code created} false). */
  public record Fired(Instant tick, String workflow, long runId, boolean created) {}

  private static final String COLUMNS =
      "name, workflow_name, cron, zone, input::text AS input, catch_up, max_catch_up, paused,"
          + " next_tick, last_tick, source, created_at, updated_at, overlap, pause_after_failures,"
          + " failures_in_row, cardinality(buffered) AS buffered, last_run_id";

  /** A schedule made or changed by {@code call} (its settings' eight), then given its policy. */
  private static String withPolicy(String call) {
    return "SELECT "
        + COLUMNS
        + " FROM queue.schedule_set_policy((SELECT name FROM "
        + call
        + "(?, ?, ?, ?, ?::jsonb, ?, ?, ?)), ?, ?)";
  }

  private final Sql sql;

  public ScheduleStore(Sql sql) {
    this.sql = sql;
  }

  public ScheduleState create(Settings s) {
    return sql.one(withPolicy("queue.schedule_create"), ScheduleStore::state, params(s))
        .orElseThrow();
  }

  public ScheduleState update(Settings s) {
    return sql.one(withPolicy("queue.schedule_update"), ScheduleStore::state, params(s))
        .orElseThrow();
  }

  /**
   * Registers a worker's schedules in one transaction: each made or changed, or none when one is
   * refused.
   */
  public List<ScheduleState> register(List<Settings> schedules) {
    return sql.onConnection(
        c -> {
          c.setAutoCommit(false);
          try {
            List<ScheduleState> out = new java.util.ArrayList<>();
            for (Settings s : schedules) {
              out.add(
                  Sql.list(
                          c,
                          "SELECT "
                              + COLUMNS
                              + " FROM queue.schedule_set_policy((SELECT (r.schedule).name FROM"
                              + " queue.schedule_register(?, ?, ?, ?, ?::jsonb, ?, ?, ?) r), ?, ?)",
                          ScheduleStore::state,
                          params(s))
                      .get(0));
            }
            c.commit();
            return out;
          } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
          } finally {
            c.setAutoCommit(true);
          }
        });
  }

  public ScheduleState pause(String name, boolean paused, Instant nextTick) {
    return sql.one(
            "SELECT " + COLUMNS + " FROM queue.schedule_pause(?, ?, ?)",
            ScheduleStore::state,
            name,
            paused,
            at(nextTick))
        .orElseThrow();
  }

  public boolean delete(String name) {
    return sql.one("SELECT queue.schedule_delete(?)", rs -> rs.getBoolean(1), name).orElseThrow();
  }

  public Optional<ScheduleState> get(String name) {
    return sql.one("SELECT " + COLUMNS + " FROM queue.schedule_get(?)", ScheduleStore::state, name);
  }

  public List<ScheduleState> list() {
    return sql.list("SELECT " + COLUMNS + " FROM queue.schedule_list()", ScheduleStore::state);
  }

  /** Up to {@code limit} due schedules, locked for {@code c}'s transaction. */
  public static List<ScheduleState> due(Connection c, Instant now, int limit) throws SQLException {
    return Sql.list(
        c,
        "SELECT " + COLUMNS + " FROM queue.schedule_due(?, ?)",
        ScheduleStore::state,
        at(now),
        limit);
  }

  /** Runs a due schedule's ticks and moves it to {@code next}, unless another server did. */
  public static List<Fired> fire(
      Connection c, String name, Instant due, List<Instant> ticks, Instant next, int maxRetention)
      throws SQLException {
    return Sql.list(
        c,
        "SELECT tick, workflow_name, run_id, created"
            + " FROM queue.schedule_fire(?, ?, ?::timestamptz[], ?, ?)",
        ScheduleStore::fired,
        name,
        at(due),
        c.createArrayOf("text", ticks.stream().map(Instant::toString).toArray()),
        at(next),
        maxRetention);
  }

  /**
   * Starts the buffered ticks whose turn came (the schedule's last run ended), of up to {@code
   * limit} schedules.
   */
  public static List<Fired> drain(Connection c, int limit, int maxRetention) throws SQLException {
    return Sql.list(
        c,
        "SELECT tick, workflow_name, run_id, created FROM queue.schedule_drain(?, ?)",
        ScheduleStore::fired,
        limit,
        maxRetention);
  }

  /** Runs {@code ticks} of schedule {@code name} now under its overlap policy. */
  public List<Backfill.Tick> backfill(String name, List<Instant> ticks, int maxRetention) {
    return sql.onConnection(
        c ->
            Sql.list(
                c,
                "SELECT tick, outcome, run_id, created"
                    + " FROM queue.schedule_backfill(?, ?::timestamptz[], ?)",
                rs -> {
                  long run = rs.getLong(3);
                  Long runId = rs.wasNull() ? null : run;
                  return new Backfill.Tick(
                      rs.getObject(1, OffsetDateTime.class).toInstant(),
                      rs.getString(2),
                      runId,
                      runId == null ? null : rs.getBoolean(4));
                },
                name,
                c.createArrayOf("text", ticks.stream().map(Instant::toString).toArray()),
                maxRetention));
  }

  /** A row of tick, workflow, run and created. */
  private static Fired fired(ResultSet rs) throws SQLException {
    return new Fired(
        rs.getObject(1, OffsetDateTime.class).toInstant(),
        rs.getString(2),
        rs.getLong(3),
        rs.getBoolean(4));
  }

  private static Object[] params(Settings s) {
    return new Object[] {
      s.name(),
      s.workflow(),
      s.cron(),
      s.zone(),
      s.inputJson(),
      s.catchUp(),
      s.maxCatchUp(),
      at(s.nextTick()),
      s.overlap(),
      s.pauseAfterFailures()
    };
  }

  private static OffsetDateTime at(Instant t) {
    return t == null ? null : t.atOffset(ZoneOffset.UTC);
  }

  private static Instant instant(ResultSet rs, String column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  private static ScheduleState state(ResultSet rs) throws SQLException {
    return new ScheduleState(
        rs.getString("name"),
        rs.getString("workflow_name"),
        rs.getString("cron"),
        rs.getString("zone"),
        rs.getString("input"),
        rs.getString("catch_up"),
        rs.getInt("max_catch_up"),
        rs.getBoolean("paused"),
        instant(rs, "next_tick"),
        instant(rs, "last_tick"),
        rs.getString("source"),
        instant(rs, "created_at"),
        instant(rs, "updated_at"),
        rs.getString("overlap"),
        (Integer) rs.getObject("pause_after_failures"),
        rs.getInt("failures_in_row"),
        rs.getInt("buffered"),
        (Long) rs.getObject("last_run_id"));
  }
}
