package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * Callback tokens: an HMAC of the run and the callback's name under a key of the database, minted
 * once per name, good for one use within its time, and refused (changing nothing) when forged,
 * altered, used, late, or for a run that ended. A resolution reaches the run's inbox as the event
 * {@code __callback.<name>}.
 */
class CallbacksTest {

  private static long start(Connection c) throws SQLException {
    return Long.parseLong(
        query(c, "SELECT run_id FROM queue.workflow_start('cb', '1'::jsonb, NULL, NULL)"));
  }

  private static String mint(Connection c, long run, String name, long timeoutMs)
      throws SQLException {
    return query(
        c,
        "SELECT token FROM queue.workflow_callback_create("
            + run
            + ", '"
            + name
            + "', "
            + timeoutMs
            + ")");
  }

  private static String resolve(Connection c, String token, boolean ok) throws SQLException {
    return query(
        c,
        "SELECT outcome FROM queue.workflow_callback_resolve('"
            + token.replace("'", "''")
            + "', "
            + ok
            + ", '{\"approved\": true}'::jsonb)");
  }

  @Test
  void theMacIsHmacSha256() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      // RFC 4231, test cases 2 and 6 (a key longer than a block).
      assertThat(
              query(
                  c,
                  "SELECT encode(queue.hmac_sha256(convert_to('Jefe', 'UTF8'),"
                      + " convert_to('what do ya want for nothing?', 'UTF8')), 'hex')"))
          .isEqualTo("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
      assertThat(
              query(
                  c,
                  "SELECT encode(queue.hmac_sha256(decode(repeat('aa', 131), 'hex'),"
                      + " convert_to('Test Using Larger Than Block-Size Key - Hash Key First',"
                      + " 'UTF8')), 'hex')"))
          .isEqualTo("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }
  }

  @Test
  void aTokenWorksOnceAndReachesTheRunsInbox() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c);
      String token = mint(c, run, "approval", 60_000);
      assertThat(token).matches(run + "\\.1\\.[0-9a-f]{64}\\.approval");
      assertThat(mint(c, run, "approval", 5_000)).as("a repeat mints nothing new").isEqualTo(token);

      assertThat(resolve(c, token, true)).isEqualTo("resolved");
      assertThat(resolve(c, token, true)).isEqualTo("gone");
      assertThat(resolve(c, token, false)).isEqualTo("gone");
      assertThat(
              rows(
                  c,
                  "SELECT event || ' ' || payload FROM queue.workflow_signal s WHERE run_id = "
                      + run))
          .containsExactly("__callback.approval {\"ok\": true, \"body\": {\"approved\": true}}");
      assertThat(query(c, "SELECT outcome FROM queue.workflow_callbacks(" + run + ")"))
          .isEqualTo("resolved");
    }
  }

  @Test
  void aForgedOrAlteredTokenIsInvalidAndChangesNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c);
      String token = mint(c, run, "approval", 60_000);
      String mac = token.split("\\.")[2];
      String flipped = (mac.charAt(0) == '0' ? "1" : "0") + mac.substring(1);
      for (String bad :
          new String[] {
            token.replace(mac, flipped),
            token.replace(".approval", ".other"),
            (run + 1) + token.substring(String.valueOf(run).length()),
            token.replace(run + ".1.", run + ".2."),
            token + "x'; DROP TABLE queue.workflow_run; --",
            "",
          }) {
        assertThat(resolve(c, bad, true)).as(bad).isEqualTo("invalid");
      }
      assertThat(rows(c, "SELECT 1 FROM queue.workflow_signal WHERE run_id = " + run)).isEmpty();
      assertThat(resolve(c, token, false)).isEqualTo("rejected");
    }
  }

  @Test
  void aLateTokenOrOneOfAnEndedRunIsGone() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c);
      String late = mint(c, run, "late", 1_000);
      exec(
          c,
          "UPDATE queue.workflow_callback SET expires_at = now() - interval '1 s' WHERE name ="
              + " 'late'");
      assertThat(resolve(c, late, true)).isEqualTo("gone");
      String token = mint(c, run, "approval", 60_000);
      exec(c, "SELECT * FROM queue.workflow_cancel(" + run + ")");
      assertThat(resolve(c, token, true)).isEqualTo("gone");
      assertThatThrownBy(() -> mint(c, run, "another", 60_000))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("WF003"));
    }
  }

  @Test
  void aRotatedKeyMintsNewTokensAndTheOldOnesStillCheck() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c);
      String before = mint(c, run, "first", 60_000);
      assertThat(query(c, "SELECT queue.callback_rotate_key()")).isEqualTo("2");
      String after = mint(c, run, "second", 60_000);
      assertThat(after).startsWith(run + ".2.");
      assertThat(resolve(c, before, true)).isEqualTo("resolved");
      assertThat(resolve(c, after, true)).isEqualTo("resolved");
    }
  }

  @Test
  void aBadNameOrTimeoutIsRefusedNamingIt() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      long run = start(c);
      assertThatThrownBy(() -> mint(c, run, "no/slash", 60_000)).hasMessageContaining("step name");
      assertThatThrownBy(() -> mint(c, run, "ok", 10)).hasMessageContaining("timeoutMs");
      assertThat(rows(c, "SELECT 1 FROM queue.workflow_callback")).isEmpty();
    }
  }
}
