package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * At 1,000,000 runs (search/million-runs.sql), queries over runs are answered from indexes: the
 * plans of the statements run_search and run_count run never scan the whole run table, and each
 * answers what a direct count says. The times printed are the ones docs/benchmarks.md quotes. The
 * load drops the secondary indexes and makes them again from their definitions; the test checks
 * that they all came back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SearchPlansAtAMillionRunsTest {
  /** Each query, as the server's parser gives it, with the direct count of its runs. */
  private static final Map<String, String> QUERIES = new LinkedHashMap<>();

  static {
    QUERIES.put(
        "status = 'failed' AND customer = 'customer-100' AND startedAt > '2026-11-25'"
            + " AND amount >= 100",
        "{\"and\": [{\"field\": \"status\", \"op\": \"=\", \"value\": \"failed\"},"
            + " {\"field\": \"customer\", \"op\": \"=\", \"value\": \"customer-100\"},"
            + " {\"field\": \"startedAt\", \"op\": \">\", \"value\": \"2026-11-25\"},"
            + " {\"field\": \"amount\", \"op\": \">=\", \"value\": 100}]}");
    QUERIES.put(
        "customer = 'customer-4242'",
        "{\"field\": \"customer\", \"op\": \"=\", \"value\": \"customer-4242\"}");
    QUERIES.put(
        "status = 'failed'", "{\"field\": \"status\", \"op\": \"=\", \"value\": \"failed\"}");
    QUERIES.put(
        "workflow = 'wf0' AND status = 'running'",
        "{\"and\": [{\"field\": \"workflow\", \"op\": \"=\", \"value\": \"wf0\"},"
            + " {\"field\": \"status\", \"op\": \"=\", \"value\": \"running\"}]}");
    QUERIES.put("tags = 'rush'", "{\"field\": \"tags\", \"op\": \"=\", \"value\": \"rush\"}");
    QUERIES.put(
        "amount = 999 AND startedAt >= '2026-11-30'",
        "{\"and\": [{\"field\": \"amount\", \"op\": \"=\", \"value\": 999},"
            + " {\"field\": \"startedAt\", \"op\": \">=\", \"value\": \"2026-11-30\"}]}");
  }

  /** The same selections written directly, to check the answers. */
  private static final Map<String, String> DIRECT =
      Map.of(
          "status = 'failed' AND customer = 'customer-100' AND startedAt > '2026-11-25'"
              + " AND amount >= 100",
          "g % 50 = 0 AND g % 500 <> 0 AND g % 5000 = 100 AND g > 1000000 - 6 * 86400"
              + " AND g % 1000 >= 100",
          "customer = 'customer-4242'",
          "g % 5000 = 4242",
          "status = 'failed'",
          "g % 50 = 0 AND g % 500 <> 0",
          "workflow = 'wf0' AND status = 'running'",
          "g % 20 = 0 AND g % 500 = 0",
          "tags = 'rush'",
          "g % 7 = 0",
          "amount = 999 AND startedAt >= '2026-11-30'",
          "g % 1000 = 999 AND g >= 1000000 - 86400");

  private TestDatabase db;

  @BeforeAll
  void buildAMillionRuns() throws Exception {
    db = TestDatabase.fresh();
    long t0 = System.nanoTime();
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      String indexes =
          "SELECT string_agg(pg_get_indexdef(indexrelid), '; ' ORDER BY indexrelid::regclass::text)"
              + " FROM pg_index WHERE indrelid IN ('queue.workflow_run'::regclass,"
              + " 'queue.run_attribute'::regclass)";
      String before = scalarText(s, indexes);
      s.execute(
          new String(
              getClass().getResourceAsStream("/search/million-runs.sql").readAllBytes(),
              java.nio.charset.StandardCharsets.UTF_8));
      assertThat(scalarText(s, indexes)).as("the indexes after the load").isEqualTo(before);
    }
    System.out.printf("1,000,000 runs built in %d s%n", (System.nanoTime() - t0) / 1_000_000_000);
  }

  @Test
  void listAndCountPlansUseIndexesAndAnswerWhatADirectCountSays() throws SQLException {
    try (Connection c = db.connect()) {
      for (Map.Entry<String, String> q : QUERIES.entrySet()) {
        for (boolean count : new boolean[] {false, true}) {
          String plan = plan(c, q.getValue(), count);
          assertThat(plan)
              .as("the plan of %s for %s", count ? "count" : "list", q.getKey())
              .doesNotContain("Seq Scan on workflow_run")
              .doesNotContain("Seq Scan on run_attribute");
        }
        long t0 = System.nanoTime();
        long counted = scalar(c, "SELECT queue.run_count(?::jsonb)", q.getValue());
        long countMs = (System.nanoTime() - t0) / 1_000_000;
        t0 = System.nanoTime();
        long listed =
            scalar(c, "SELECT count(*) FROM queue.run_search(?::jsonb, NULL, 50)", q.getValue());
        long listMs = (System.nanoTime() - t0) / 1_000_000;
        long direct =
            scalar(
                c,
                "SELECT count(*) FROM generate_series(1, 1000000) g WHERE "
                    + DIRECT.get(q.getKey()),
                null);
        assertThat(counted).as("count of %s", q.getKey()).isEqualTo(direct);
        assertThat(listed).as("first page of %s", q.getKey()).isEqualTo(Math.min(50, direct));
        System.out.printf(
            "at 1,000,000 runs: %s -> %d runs; count %d ms, first page of 50 %d ms%n",
            q.getKey(), counted, countMs, listMs);
      }
    }
  }

  /** The plan of the statement run_search or run_count runs for the query, with its values. */
  private static String plan(Connection c, String query, boolean count) throws SQLException {
    String sql;
    String vals;
    try (PreparedStatement p =
        c.prepareStatement(
            "SELECT o_sql, o_vals::text FROM queue.run_query_statement(?::jsonb, ?)")) {
      p.setString(1, query);
      p.setBoolean(2, count);
      try (ResultSet rs = p.executeQuery()) {
        rs.next();
        sql = rs.getString(1);
        vals = rs.getString(2);
      }
    }
    StringBuilder out = new StringBuilder();
    try (Statement s = c.createStatement()) {
      // The functions plan with enable_seqscan off (part of their definitions), so a query that
      // selects a large share of the runs still reads indexes.
      s.execute("SET enable_seqscan = off");
      // A prepared statement's first executions are planned for their values, as EXECUTE ... USING
      // in the functions plans each time.
      s.execute(
          "PREPARE search_plan(jsonb"
              + (count ? "" : ", bigint, int")
              + ") AS "
              + sql.replace("$2::bigint", "$2"));
      try (ResultSet rs =
          s.executeQuery(
              "EXPLAIN EXECUTE search_plan('"
                  + vals.replace("'", "''")
                  + "'"
                  + (count ? "" : ", NULL, 50")
                  + ")")) {
        while (rs.next()) {
          out.append(rs.getString(1)).append('\n');
        }
      } finally {
        s.execute("DEALLOCATE search_plan");
      }
    }
    return out.toString();
  }

  private static String scalarText(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long scalar(Connection c, String sql, String arg) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(sql)) {
      if (arg != null) {
        p.setString(1, arg);
      }
      try (ResultSet rs = p.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
