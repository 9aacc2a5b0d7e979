package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A receipt is vt in microseconds since the epoch, whatever the session's time zone, and the
 * planner inlines receipt_of into the statements that call it (no function call per row).
 */
class ReceiptTest {

  @Test
  void receiptsAreMicrosecondsSinceTheEpochInAnyTimeZone() throws Exception {
    try (Connection c = TestDatabase.fresh().connect();
        Statement s = c.createStatement()) {
      for (String zone : new String[] {"UTC", "Pacific/Chatham", "America/St_Johns"}) {
        s.execute("SET TimeZone = '" + zone + "'");
        try (ResultSet rs =
            s.executeQuery(
                "SELECT queue.receipt_of('2026-03-29 01:30:00.123456+00'),"
                    + " queue.receipt_of('1969-12-31 23:59:59.5+00'),"
                    + " queue.receipt_of('2100-01-01 00:00:00.000001+00')")) {
          rs.next();
          assertThat(rs.getLong(1)).as(zone).isEqualTo(1_774_747_800_123_456L);
          assertThat(rs.getLong(2)).as(zone).isEqualTo(-500_000L);
          assertThat(rs.getLong(3)).as(zone).isEqualTo(4_102_444_800_000_001L);
        }
      }
    }
  }

  @Test
  void theCallIsInlined() throws Exception {
    try (Connection c = TestDatabase.fresh().connect();
        Statement s = c.createStatement()) {
      StringBuilder plan = new StringBuilder();
      try (ResultSet rs =
          s.executeQuery(
              "EXPLAIN VERBOSE SELECT queue.receipt_of(t)"
                  + " FROM generate_series(now(), now() + interval '1 minute', interval '1 second') t")) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      assertThat(plan.toString()).doesNotContain("receipt_of").contains("epoch");
    }
  }
}
