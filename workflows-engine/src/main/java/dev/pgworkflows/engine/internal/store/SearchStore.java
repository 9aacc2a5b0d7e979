package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.SearchAttribute;
import java.util.List;
import java.util.Optional;

/**
 * Search attributes and queries over runs (sql/functions/search_attributes.sql): a query arrives as
 * the tree {@code RunQuery} parsed; the database checks its names and values and binds them.
 */
public final class SearchStore {
  private final Sql sql;

  public SearchStore(Sql sql) {
    this.sql = sql;
  }

  /** Defines an attribute ({@code search_attribute_define}); created false when it was already. */
  public SearchAttribute define(String name, String type) {
    return sql.one(
            "SELECT name, type, created FROM queue.search_attribute_define(?, ?)",
            rs -> new SearchAttribute(rs.getString(1), rs.getString(2), null, rs.getBoolean(3)),
            name,
            type)
        .orElseThrow();
  }

  public List<SearchAttribute> attributes() {
    return sql.list(
        "SELECT name, type, created_at FROM queue.search_attributes()",
        rs ->
            new SearchAttribute(
                rs.getString(1), rs.getString(2), rs.getTimestamp(3).toInstant(), null));
  }

  /** A page of the runs a query selects (null: all), newest first, before run {@code before}. */
  public List<Run> search(JsonNode query, Long before, int limit) {
    return sql.list(
        "SELECT r.*, "
            + RunStore.PARENT_WORKFLOW
            + " FROM queue.run_search(?::jsonb, ?::bigint, ?) r ORDER BY r.run_id DESC",
        rs -> Rows.run(rs).run(),
        query == null ? null : query.toString(),
        before,
        limit);
  }

  public long count(JsonNode query) {
    return sql.one(
            "SELECT queue.run_count(?::jsonb)",
            rs -> rs.getLong(1),
            query == null ? null : query.toString())
        .orElseThrow();
  }

  /** The attributes of a run of workflow {@code name} as a JSON object; empty when no such run. */
  public Optional<String> attributes(String name, long runId) {
    return sql.one(
        "SELECT queue.run_attributes(r.run_id)::text FROM queue.workflow_get(?, ?::bigint) r",
        rs -> rs.getString(1),
        name,
        runId);
  }

  /**
   * Sets attributes of a run of workflow {@code name} ({@code workflow_set_attributes}; 404 when
   * there is no such run) and answers all it has, as a JSON object.
   */
  public String set(String name, long runId, String attributes) {
    return sql.one(
            "SELECT queue.workflow_set_attributes(?, ?::bigint, ?::jsonb)::text",
            rs -> rs.getString(1),
            name,
            runId,
            attributes)
        .orElseThrow();
  }
}
