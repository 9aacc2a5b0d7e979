package dev.pgworkflows.sql;

import static dev.pgworkflows.sql.WorkflowSql.exec;
import static dev.pgworkflows.sql.WorkflowSql.query;
import static dev.pgworkflows.sql.WorkflowSql.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Parking a FIFO group's head while its consumer deletes it: both take the message's row first and
 * the group's lock after, so neither waits for the other in a circle (no 40P01), and the group goes
 * on with its next message.
 */
class ParkingAHeadItsConsumerDeletesTest {

  @Test
  void aParkWaitingForTheConsumersDeleteEndsWithoutADeadlock() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (Connection setup = db.connect();
        Connection consumer = db.connect();
        Connection operator = db.connect()) {
      QueueSql q = new QueueSql(setup);
      q.create("acks", true, 30, null);
      long head = q.send("acks", "1", null, 0, "g");
      long next = q.send("acks", "2", null, 0, "g");

      consumer.setAutoCommit(false);
      exec(consumer, "SELECT 1 FROM queue.q_acks WHERE msg_id = " + head + " FOR UPDATE");
      CompletableFuture<List<String>> park =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return rows(operator, "SELECT msg_id FROM queue.group_park('acks', 'g')");
                } catch (SQLException e) {
                  throw new IllegalStateException(e.getSQLState() + ": " + e.getMessage(), e);
                }
              });
      awaitWaitingOnALock(setup);

      exec(consumer, "SELECT queue.delete('acks', " + head + "::bigint)");
      consumer.commit();

      List<String> parked = park.get(30, TimeUnit.SECONDS);
      assertThat(parked).as("the head it meant to park was gone by then").isEmpty();
      assertThat(query(setup, "SELECT count(*) FROM queue.parked_message")).isEqualTo("0");
      assertThat(query(setup, "SELECT head FROM queue.q_acks WHERE msg_id = " + next))
          .isEqualTo("t");
    }
  }

  private static void awaitWaitingOnALock(Connection c) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < until) {
      String waiting =
          query(
              c,
              "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                  + " AND query LIKE '%group_park%' AND pid <> pg_backend_pid()");
      if (!"0".equals(waiting)) {
        return;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("the park never waited for the consumer's row lock");
  }
}
