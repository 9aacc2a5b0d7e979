package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.poll;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.startAndPoll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.sql.WorkflowSql.Held;
import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A run's retrying step in SQL: a failed attempt handed back with its step is the run's retrying
 * step, in the blockers' words; an operator pauses its retries (the task parked, also when the
 * attempt out fails or its lease runs out, and through a run's pause and resume), resumes them,
 * resets the attempts counted, and sets options the task carries to the worker.
 */
@Timeout(60)
class StepRetriesTest {

  private static final String POLL =
      "SELECT count(*) FROM queue.workflow_poll('%s', '{1}', 10, 60)";

  /** Hands the held task back as a failed attempt of {@code step}, due after {@code delayMs}. */
  private static String fail(Connection c, Held h, String step, long delayMs) throws SQLException {
    return query(
        c,
        "SELECT queue.workflow_retry("
            + h.run()
            + ", "
            + h.msg()
            + ", "
            + h.receipt()
            + ", "
            + delayMs
            + ", true, '"
            + step
            + "', '{\"name\": \"IOException\", \"message\": \"card declined\"}'::jsonb)");
  }

  private static String retry(Connection c, long run, String field) throws SQLException {
    return query(c, "SELECT queue.workflow_step_retry(" + run + ", 'charge') ->> '" + field + "'");
  }

  private static String blockers(Connection c, String workflow, long run) throws SQLException {
    return query(
        c,
        "SELECT string_agg(b ->> 'kind' || ': ' || (b ->> 'text'), ' | ')"
            + " FROM jsonb_array_elements(queue.workflow_blockers('"
            + workflow
            + "', "
            + run
            + ") -> 'blockers') b");
  }

  private static boolean parked(Connection c, String workflow, long run) throws SQLException {
    return query(
            c,
            "SELECT vt = queue.parked_vt() FROM queue.q___wf_"
                + workflow
                + " WHERE group_id = '"
                + run
                + "'")
        .equals("t");
  }

  @Test
  void aFailedAttemptIsTheRunsRetryingStepInTheBlockersWords() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "pay");
      assertThat(fail(c, h, "charge", 60_000)).isEqualTo("ok");
      assertThat(retry(c, h.run(), "attempt")).isEqualTo("1");
      assertThat(retry(c, h.run(), "state")).isEqualTo("backoff");
      assertThat(retry(c, h.run(), "error")).contains("card declined");
      assertThat(retry(c, h.run(), "nextAttemptAt")).isNotNull();
      assertThat(blockers(c, "pay", h.run()))
          .contains("retrying: attempt 1 of step \"charge\" failed (card declined);")
          .contains("the next attempt is due at")
          .doesNotContain("leased");
    }
  }

  @Test
  void pausedRetriesParkTheTaskThroughTheRunsPauseUntilResumed() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "pay");
      fail(c, h, "charge", 0);
      assertThat(query(c, "SELECT queue.workflow_step_pause(" + h.run() + ", 'charge', true)"))
          .contains("\"state\": \"paused\"");
      assertThat(parked(c, "pay", h.run())).isTrue();
      assertThat(query(c, String.format(POLL, "pay"))).isEqualTo("0");
      assertThat(blockers(c, "pay", h.run()))
          .startsWith("step_paused: the retries of step \"charge\" are paused (since ")
          .contains("attempt 1 of step \"charge\" failed (card declined)");

      // The run's own pause and resume leave the step's retries paused.
      exec(c, "SELECT queue.workflow_run_pause(" + h.run() + ", true)");
      exec(c, "SELECT queue.workflow_run_pause(" + h.run() + ", false)");
      assertThat(parked(c, "pay", h.run())).isTrue();
      assertThat(query(c, String.format(POLL, "pay"))).isEqualTo("0");

      assertThat(query(c, "SELECT queue.workflow_step_pause(" + h.run() + ", 'charge', false)"))
          .contains("\"state\": \"backoff\"");
      assertThat(
              query(
                  c,
                  "SELECT run_id || ':' || attempt FROM queue.workflow_poll('pay', '{1}', 10, 60)"))
          .isEqualTo(h.run() + ":2");
    }
  }

  @Test
  void anAttemptOutAtThePauseIsNotTriedAgainWhenItFailsOrItsLeaseRunsOut() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "pay");
      fail(c, h, "charge", 0);
      Held second = poll(c, "pay");
      assertThat(retry(c, h.run(), "state")).isEqualTo("running");
      exec(c, "SELECT queue.workflow_step_pause(" + h.run() + ", 'charge', true)");
      assertThat(parked(c, "pay", h.run())).isFalse();
      assertThat(fail(c, second, "charge", 0)).isEqualTo("ok");
      assertThat(parked(c, "pay", h.run())).isTrue();
      assertThat(retry(c, h.run(), "attempt")).isEqualTo("2");
      assertThat(query(c, String.format(POLL, "pay"))).isEqualTo("0");

      // Resumed, taken, paused again: the worker holding attempt 3 dies, its lease runs out, and
      // the poll that receives the task parks it.
      exec(c, "SELECT queue.workflow_step_pause(" + h.run() + ", 'charge', false)");
      poll(c, "pay");
      exec(c, "SELECT queue.workflow_step_pause(" + h.run() + ", 'charge', true)");
      exec(c, "UPDATE queue.q___wf_pay SET vt = clock_timestamp() - interval '1 second'");
      assertThat(query(c, String.format(POLL, "pay"))).isEqualTo("0");
      assertThat(parked(c, "pay", h.run())).isTrue();
      assertThat(query(c, "SELECT read_ct FROM queue.q___wf_pay")).isEqualTo("3");
    }
  }

  @Test
  void aResetCountsFromTheFirstAttemptAgainButNotWhileAnAttemptIsOut() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "pay");
      fail(c, h, "charge", 0);
      Held second = poll(c, "pay");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.workflow_step_reset(" + h.run() + ", 'charge')"))
          .hasMessageContaining(
              "attempt 2 of step \"charge\" of run " + h.run() + " is out with a worker");
      fail(c, second, "charge", 60_000);
      assertThat(retry(c, h.run(), "attempt")).isEqualTo("2");
      assertThat(
              query(c, "SELECT queue.workflow_step_reset(" + h.run() + ", 'charge') ->> 'attempt'"))
          .isEqualTo("0");
      assertThat(
              query(
                  c,
                  "SELECT run_id || ':' || attempt || ':' || reason"
                      + " FROM queue.workflow_poll('pay', '{1}', 10, 60)"))
          .isEqualTo(h.run() + ":1:resume");
    }
  }

  @Test
  void optionsGoWithTheTaskAndBadOnesAreRefusedChangingNothing() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "pay");
      fail(c, h, "charge", 0);
      assertThat(
              query(
                  c,
                  "SELECT queue.workflow_step_options("
                      + h.run()
                      + ", 'charge', '{\"attempts\": 10, \"timeoutMs\": 500, \"maxMs\": null}')"
                      + " -> 'options'"))
          .isEqualTo("{\"attempts\": 10, \"timeoutMs\": 500}");
      for (String bad :
          new String[] {
            "{\"attempts\": 0}|attempts must be between 1 and 1000, got 0",
            "{\"attempts\": 2.5}|attempts must be a whole number",
            "{\"backoff\": \"random\"}|backoff must be",
            "{\"baseMs\": 10, \"maxMs\": 5}|maxMs must be at least baseMs",
            "{\"jitter\": 1}|options.jitter is not an option",
            "[1]|options must be an object"
          }) {
        String[] p = bad.split("\\|");
        assertThatThrownBy(
                () ->
                    exec(
                        c,
                        "SELECT queue.workflow_step_options("
                            + h.run()
                            + ", 'charge', '"
                            + p[0]
                            + "')"))
            .as(p[0])
            .hasMessageContaining(p[1]);
      }
      assertThat(retry(c, h.run(), "options")).isEqualTo("{\"attempts\": 10, \"timeoutMs\": 500}");
      assertThat(
              query(
                  c,
                  "SELECT attempt || ' ' || step_options"
                      + " FROM queue.workflow_poll('pay', '{1}', 10, 60)"))
          .isEqualTo("2 {\"step\": \"charge\", \"attempts\": 10, \"timeoutMs\": 500}");
    }
  }

  @Test
  void aStepThatIsNotRetryingOrHasSucceededSinceCannotBeOperated() throws SQLException {
    try (Connection c = TestDatabase.fresh().connect()) {
      Held h = startAndPoll(c, "pay");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.workflow_step_pause(" + h.run() + ", 'charge', true)"))
          .hasMessageContaining("run " + h.run() + " is not retrying step \"charge\"")
          .hasMessageContaining("no attempt of it has failed");
      fail(c, h, "charge", 0);
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.workflow_step_reset(" + h.run() + ", 'other')"))
          .hasMessageContaining("the step it retries is \"charge\"");
      Held again = poll(c, "pay");
      WorkflowSql.inline(c, again, "charge");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.workflow_step_retry(" + h.run() + ", 'charge')"))
          .hasMessageContaining("is not retrying step \"charge\"");
      assertThatThrownBy(
              () -> exec(c, "SELECT queue.workflow_step_retry(" + (h.run() + 99) + ", 'charge')"))
          .hasMessageContaining("does not exist");
      assertThat(query(c, "SELECT count(*) FROM queue.step_retry WHERE paused_at IS NOT NULL"))
          .isEqualTo("0");
    }
  }
}
