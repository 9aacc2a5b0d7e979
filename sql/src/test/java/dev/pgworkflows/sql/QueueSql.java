package dev.pgworkflows.sql;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Test helper: calls the queue functions over one JDBC connection. */
final class QueueSql {
  record Msg(long id, int readCount, String body, String headers, String groupId) {}

  private final Connection c;

  QueueSql(Connection c) {
    this.c = c;
  }

  boolean create(String name, boolean fifo, int vt, Integer maxReceives) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT queue.create_queue(?, ?, ?, ?)")) {
      ps.setString(1, name);
      ps.setBoolean(2, fifo);
      ps.setInt(3, vt);
      ps.setObject(4, maxReceives);
      return single(ps).getBoolean(1);
    }
  }

  long send(String queue, String body) throws SQLException {
    return send(queue, body, null, 0, null);
  }

  long send(String queue, String body, String headers, int delay, String group)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT queue.send(?, ?::jsonb, ?::jsonb, ?, ?)")) {
      ps.setString(1, queue);
      ps.setString(2, body);
      ps.setString(3, headers);
      ps.setInt(4, delay);
      ps.setString(5, group);
      return single(ps).getLong(1);
    }
  }

  List<Msg> receive(String queue, int qty, Integer vt, String matcher, Instant now)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT * FROM queue.receive(?, ?, ?, ?::jsonb, ?)")) {
      ps.setString(1, queue);
      ps.setInt(2, qty);
      ps.setObject(3, vt);
      ps.setString(4, matcher);
      ps.setTimestamp(5, now == null ? null : Timestamp.from(now));
      return messages(ps);
    }
  }

  List<Msg> receive(String queue, int qty) throws SQLException {
    return receive(queue, qty, null, null, null);
  }

  List<Msg> receiveFifo(String queue, int qty, Instant now) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT * FROM queue.receive_fifo(?, ?, NULL, NULL, ?)")) {
      ps.setString(1, queue);
      ps.setInt(2, qty);
      ps.setTimestamp(3, now == null ? null : Timestamp.from(now));
      return messages(ps);
    }
  }

  boolean delete(String queue, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT queue.delete(?, ?::bigint)")) {
      ps.setString(1, queue);
      ps.setLong(2, id);
      return single(ps).getBoolean(1);
    }
  }

  List<Boolean> deleteMany(String queue, Long... ids) throws SQLException {
    Array arr = c.createArrayOf("bigint", ids);
    try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queue.delete(?, ?::bigint[])")) {
      ps.setString(1, queue);
      ps.setArray(2, arr);
      List<Boolean> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getBoolean(2));
        }
      }
      return out;
    }
  }

  long scalarLong(String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      return single(ps).getLong(1);
    }
  }

  /**
   * A completion batch (JSON) of one item that journals step "only" and ends the run as completed.
   */
  static String finishingBatch(long run, long msg, long receipt) {
    return String.format(
        "[{\"run_id\": %d, \"msg_id\": %d, \"receipt\": %d, \"step_name\": \"only\","
            + " \"step_kind\": \"run\", \"output\": 1,"
            + " \"result\": {\"status\": \"completed\", \"output\": 1}}]",
        run, msg, receipt);
  }

  private static ResultSet single(PreparedStatement ps) throws SQLException {
    ResultSet rs = ps.executeQuery();
    rs.next();
    return rs;
  }

  private static List<Msg> messages(PreparedStatement ps) throws SQLException {
    List<Msg> out = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(
            new Msg(
                rs.getLong("msg_id"),
                rs.getInt("read_ct"),
                rs.getString("body"),
                rs.getString("headers"),
                rs.getString("group_id")));
      }
    }
    return out;
  }
}
