package dev.pgworkflows.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.statistics.Statistics;

/**
 * The state of one stateful test: two queues in the database (one FIFO, one standard, both with max
 * receives, so dead letters), their models, the simulated clock every call passes as {@code p_now},
 * and the connections the calls go through. Each action calls the SQL and the model and compares
 * the answers; {@link #check()} compares everything else after every step.
 */
final class QueuesAgainstModel {
  /** What a test queue is: its name in the database and its model. */
  static final class Q {
    final String name;
    final QueueModel model;
    final TreeSet<Long> everSent = new TreeSet<>();

    Q(String name, QueueModel model) {
      this.name = name;
      this.model = model;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  static final int FIFO = 0;
  static final int STANDARD = 1;
  private static final AtomicInteger runs = new AtomicInteger();
  private static final AtomicInteger keys = new AtomicInteger();

  final List<Connection> connections;
  final Q[] queues;

  /** Simulated now, microseconds since the epoch; a day ahead of the database's own clock. */
  long now;

  /** Per FIFO group, the keys of first deliveries in order (for the order invariant). */
  private final Map<String, List<String>> firstDeliveries = new HashMap<>();

  private final Map<String, Integer> sendOrder = new HashMap<>();
  private final Set<String> delivered = new HashSet<>();

  QueuesAgainstModel(List<Connection> connections, List<String> created) {
    this.connections = connections;
    int run = runs.incrementAndGet();
    String fifo = "model_f" + ProcessHandle.current().pid() + "_" + run;
    String standard = "model_s" + ProcessHandle.current().pid() + "_" + run;
    try {
      exec(0, "SELECT queue.create_queue('" + fifo + "', true, 20, 3)");
      exec(0, "SELECT queue.create_queue('" + standard + "', false, 10, 2)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    created.add(fifo);
    created.add(standard);
    queues =
        new Q[] {
          new Q(fifo, new QueueModel(true, 3, 20)), new Q(standard, new QueueModel(false, 2, 10))
        };
    now =
        Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS).toEpochMilli()
            * 1000;
  }

  // ---- actions -------------------------------------------------------------------------------

  record Send(String group, int delaySeconds) {
    @Override
    public String toString() {
      return "{group " + group + ", delay " + delaySeconds + "}";
    }
  }

  void send(int queue, int conn, Send s) throws SQLException {
    Q q = queues[queue];
    String key = nextKey();
    long id;
    try (PreparedStatement ps =
        c(conn).prepareStatement("SELECT queue.send(?, ?::jsonb, NULL, ?, ?, ?)")) {
      ps.setString(1, q.name);
      ps.setString(2, "{\"k\": \"" + key + "\"}");
      ps.setInt(3, s.delaySeconds());
      ps.setString(4, s.group());
      ps.setObject(5, time(now));
      id = single(ps).getLong(1);
    }
    sent(q, id, s, key);
  }

  void sendBatch(int queue, int conn, List<Send> batch) throws SQLException {
    Q q = queues[queue];
    List<String> keys = new ArrayList<>();
    StringBuilder json = new StringBuilder("[");
    for (Send s : batch) {
      String key = nextKey();
      keys.add(key);
      json.append(json.length() > 1 ? "," : "")
          .append("{\"body\": {\"k\": \"")
          .append(key)
          .append("\"}, \"delaySeconds\": ")
          .append(s.delaySeconds())
          .append(s.group() == null ? "" : ", \"groupId\": \"" + s.group() + "\"")
          .append("}");
    }
    json.append("]");
    List<Long> ids = new ArrayList<>();
    try (PreparedStatement ps =
        c(conn).prepareStatement("SELECT * FROM queue.send_batch(?, ?::jsonb, ?)")) {
      ps.setString(1, q.name);
      ps.setString(2, json.toString());
      ps.setObject(3, time(now));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
    }
    assertThat(ids).as("one id per message, in input order").hasSize(batch.size()).isSorted();
    for (int i = 0; i < batch.size(); i++) {
      sent(q, ids.get(i), batch.get(i), keys.get(i));
    }
  }

  void receive(int queue, int conn, int qty, Integer vt) throws SQLException {
    Q q = queues[queue];
    QueueModel.Choice choice = q.model.choose(now, qty, Set.of());
    checkOrder(q, choice);
    List<QueueModel.Delivery> expected = q.model.apply(choice, now, vt);
    List<QueueModel.Delivery> got = receiveSql(q, conn, qty, vt);
    assertThat(got).as("receive from %s (qty %d, vt %s)", q, qty, vt).isEqualTo(expected);
    Statistics.label("receives").collect(got.isEmpty() ? "empty" : "some");
    Statistics.label("receives that dead-letter").collect(!choice.deadLettered().isEmpty());
    Statistics.label("redelivered (read count > 1)")
        .collect(got.stream().anyMatch(d -> d.readCount() > 1));
    recordDeliveries(q, got);
  }

  /**
   * Connection {@code a} receives inside a transaction, the other connection receives meanwhile (it
   * passes by what {@code a} holds), {@code a} deletes the first message it got (when asked), then
   * commits or rolls back: a rollback leaves no trace of {@code a}'s receive or delete.
   */
  void receiveInTransaction(
      int queue, int a, int qtyA, int qtyB, boolean deleteFirst, boolean commit)
      throws SQLException {
    Q q = queues[queue];
    int b = 1 - a;
    QueueModel before = q.model.copy();
    QueueModel inA = q.model.copy();
    QueueModel.Choice choiceA = inA.choose(now, qtyA, Set.of());
    checkOrder(q, choiceA);
    List<QueueModel.Delivery> expectedA = inA.apply(choiceA, now, null);
    Set<Long> held = new HashSet<>(choiceA.all());
    Connection ca = c(a);
    ca.setAutoCommit(false);
    try {
      List<QueueModel.Delivery> gotA = receiveSql(q, a, qtyA, null);
      assertThat(gotA).as("receive in a transaction on connection %d", a).isEqualTo(expectedA);

      QueueModel.Choice choiceB = q.model.choose(now, qtyB, held);
      checkOrder(q, choiceB);
      List<QueueModel.Delivery> expectedB = q.model.apply(choiceB, now, null);
      List<QueueModel.Delivery> gotB = receiveSql(q, b, qtyB, null);
      assertThat(gotB)
          .as("receive on connection %d while connection %d holds %s", b, a, held)
          .isEqualTo(expectedB);
      recordDeliveries(q, gotB);

      if (deleteFirst && !gotA.isEmpty()) {
        long id = gotA.get(0).id();
        assertThat(inA.delete(id)).isTrue();
        assertThat(deleteSql(q, a, id)).as("delete of %d inside the transaction", id).isTrue();
      }
      Statistics.label("transactions")
          .collect((commit ? "commit" : "rollback") + (held.isEmpty() ? ", nothing held" : ""));
      if (commit) {
        ca.commit();
        q.model.adopt(inA, held);
        recordDeliveries(q, gotA);
      } else {
        ca.rollback();
      }
    } finally {
      if (!ca.getAutoCommit()) {
        ca.rollback();
        ca.setAutoCommit(true);
      }
    }
    assertThat(before.live.keySet()).containsAll(held);
  }

  void delete(int queue, int conn, long id) throws SQLException {
    Q q = queues[queue];
    boolean expected = q.model.delete(id);
    Statistics.label("deletes").collect(expected);
    assertThat(deleteSql(q, conn, id)).as("delete %d from %s", id, q).isEqualTo(expected);
  }

  void changeVisibility(int queue, int conn, long id, int seconds) throws SQLException {
    Q q = queues[queue];
    Long expected = q.model.changeVisibility(id, now, seconds);
    Long got;
    try (PreparedStatement ps =
        c(conn).prepareStatement("SELECT queue.change_visibility(?, ?, ?, ?)")) {
      ps.setString(1, q.name);
      ps.setLong(2, id);
      ps.setInt(3, seconds);
      ps.setObject(4, time(now));
      OffsetDateTime t = single(ps).getObject(1, OffsetDateTime.class);
      got = t == null ? null : micros(t);
    }
    assertThat(got).as("change visibility of %d in %s by %d s", id, q, seconds).isEqualTo(expected);
  }

  void timePasses(int seconds) {
    now += seconds * 1_000_000L;
  }

  /**
   * Redrives every dead letter of a queue. The database sends them at its own clock, before any
   * simulated time, so they are visible at once; their new ids come from the table, matched to the
   * model's dead letters by body.
   */
  void redrive(int queue, int conn) throws SQLException {
    Q q = queues[queue];
    long maxBefore = maxId(q);
    List<QueueModel.Dead> dead = q.model.takeDeadLetters();
    long count;
    try (PreparedStatement ps =
        c(conn).prepareStatement("SELECT queue.redrive_dead_letters(?, NULL)")) {
      ps.setString(1, q.name);
      count = single(ps).getLong(1);
    }
    assertThat(count).as("redriven from %s", q).isEqualTo(dead.size());
    Statistics.label("redrives").collect(count > 0);
    Map<String, QueueModel.Dead> byKey = new HashMap<>();
    dead.forEach(d -> byKey.put(d.key(), d));
    for (Row r : rows(q)) {
      if (r.id() > maxBefore) {
        QueueModel.Dead d = byKey.remove(r.key());
        assertThat(d).as("redriven message %d (%s) was a dead letter", r.id(), r.key()).isNotNull();
        assertThat(r.group()).isEqualTo(d.group());
        assertThat(r.readCount()).as("a redriven message starts uncounted").isZero();
        q.model.send(r.id(), d.group(), d.key(), QueueModel.DATABASE_CLOCK + r.id());
        q.everSent.add(r.id());
      }
    }
    assertThat(byKey).as("dead letters not redriven").isEmpty();
  }

  // ---- invariants ----------------------------------------------------------------------------

  /** After every step: the tables say what the models say, and the promises hold of them. */
  void check() {
    try {
      for (Q q : queues) {
        checkQueue(q);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private void checkQueue(Q q) throws SQLException {
    List<Row> rows = rows(q);
    Map<Long, QueueModel.Msg> live = q.model.live;
    // Nothing lost, nothing extra: the undeleted, not dead-lettered messages are exactly there.
    assertThat(rows.stream().map(Row::id).toList())
        .as("messages of %s", q)
        .containsExactlyElementsOf(live.keySet());
    Map<String, Row> headOf = new LinkedHashMap<>();
    for (Row r : rows) {
      QueueModel.Msg m = live.get(r.id());
      assertThat(r.key()).as("body of %d", r.id()).isEqualTo(m.key);
      assertThat(r.group()).as("group of %d", r.id()).isEqualTo(m.group);
      // At-least-once with a count: the table counts the receives the model counted.
      assertThat(r.readCount()).as("read count of %d in %s", r.id(), q).isEqualTo(m.receives);
      if (m.visibleAt < 0) {
        assertThat(r.vt()).as("vt of redriven %d, before simulated time", r.id()).isLessThan(now);
      } else {
        assertThat(r.vt()).as("vt of %d in %s", r.id(), q).isEqualTo(m.visibleAt);
      }
      // Dead letters exactly after max receives: none still here was received more often.
      assertThat(r.readCount()).isLessThanOrEqualTo(q.model.maxReceives);
      boolean grouped = q.model.fifo && r.group() != null;
      // Every message can be handed out once what is older in its group is gone: the oldest of a
      // group is its head, and only a head was ever received (single flight per group).
      assertThat(r.head())
          .as("head flag of %d in %s", r.id(), q)
          .isEqualTo(!grouped || !headOf.containsKey(r.group()));
      if (!r.head()) {
        assertThat(r.readCount()).as("a message behind its group's head was received").isZero();
      }
      if (grouped) {
        headOf.putIfAbsent(r.group(), r);
      }
    }
    if (q.model.fifo) {
      Map<String, Integer> inFlight = new HashMap<>();
      for (Row r : rows) {
        if (r.group() != null && r.readCount() > 0 && r.vt() > now) {
          inFlight.merge(r.group(), 1, Integer::sum);
        }
      }
      assertThat(inFlight.values()).as("messages in flight per group").allMatch(n -> n <= 1);
    }
    List<QueueModel.Dead> deadRows = deadLetters(q);
    assertThat(deadRows)
        .as("dead letters of %s", q)
        .containsExactlyInAnyOrderElementsOf(q.model.dead);
    assertThat(deadRows)
        .as("dead-lettered exactly after max receives")
        .allMatch(d -> d.readCount() == q.model.maxReceives);
  }

  /** The order invariant, on what a receive is about to hand out (before the model applies it). */
  private void checkOrder(Q q, QueueModel.Choice choice) {
    if (!q.model.fifo) {
      return;
    }
    for (long id : choice.leased()) {
      QueueModel.Msg m = q.model.live.get(id);
      if (m.group != null) {
        assertThat(q.model.oldestOf(m.group).id)
            .as("a message of group %s overtakes an older undeleted one", m.group)
            .isEqualTo(id);
      }
    }
  }

  private void recordDeliveries(Q q, List<QueueModel.Delivery> got) {
    if (!q.model.fifo) {
      return;
    }
    for (QueueModel.Delivery d : got) {
      if (d.group() != null && delivered.add(d.key())) {
        List<String> seen = firstDeliveries.computeIfAbsent(d.group(), g -> new ArrayList<>());
        if (!seen.isEmpty()) {
          assertThat(sendOrder.get(d.key()))
              .as("group %s first delivers %s after %s", d.group(), d.key(), seen)
              .isGreaterThan(sendOrder.get(seen.get(seen.size() - 1)));
        }
        seen.add(d.key());
      }
    }
  }

  /**
   * Nothing lost: with enough time, receiving and deleting empties both queues, every message that
   * was live delivered or dead-lettered on the way.
   */
  void drainAndCheck() throws SQLException {
    for (int queue = 0; queue < queues.length; queue++) {
      Q q = queues[queue];
      Set<Long> owed = new HashSet<>(q.model.live.keySet());
      for (int round = 0; round < 200 && !q.model.live.isEmpty(); round++) {
        timePasses(3600);
        QueueModel.Choice choice = q.model.choose(now, 10, Set.of());
        List<QueueModel.Delivery> expected = q.model.apply(choice, now, null);
        List<QueueModel.Delivery> got = receiveSql(q, round % 2, 10, null);
        assertThat(got).as("draining %s", q).isEqualTo(expected);
        choice.deadLettered().forEach(owed::remove);
        for (QueueModel.Delivery d : got) {
          owed.remove(d.id());
          q.model.delete(d.id());
          assertThat(deleteSql(q, round % 2, d.id())).isTrue();
        }
        check();
      }
      assertThat(owed).as("messages of %s never delivered", q).isEmpty();
      assertThat(rows(q)).as("%s after draining", q).isEmpty();
    }
  }

  // ---- SQL -----------------------------------------------------------------------------------

  record Row(long id, String group, boolean head, int readCount, long vt, String key) {}

  private List<QueueModel.Delivery> receiveSql(Q q, int conn, int qty, Integer vt)
      throws SQLException {
    String fn = q.model.fifo ? "receive_fifo" : "receive";
    List<QueueModel.Delivery> out = new ArrayList<>();
    try (PreparedStatement ps =
        c(conn)
            .prepareStatement(
                "SELECT msg_id, group_id, body ->> 'k', read_ct FROM queue."
                    + fn
                    + "(?, ?, ?, NULL, ?) ORDER BY msg_id")) {
      ps.setString(1, q.name);
      ps.setInt(2, qty);
      ps.setObject(3, vt);
      ps.setObject(4, time(now));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new QueueModel.Delivery(
                  rs.getLong(1), rs.getString(2), rs.getString(3), rs.getInt(4)));
        }
      }
    }
    return out;
  }

  private boolean deleteSql(Q q, int conn, long id) throws SQLException {
    try (PreparedStatement ps = c(conn).prepareStatement("SELECT queue.delete(?, ?::bigint)")) {
      ps.setString(1, q.name);
      ps.setLong(2, id);
      return single(ps).getBoolean(1);
    }
  }

  private List<Row> rows(Q q) throws SQLException {
    List<Row> out = new ArrayList<>();
    try (Statement s = c(0).createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT msg_id, group_id, head, read_ct, vt, body ->> 'k' FROM queue.\"q_"
                    + q.name
                    + "\" ORDER BY msg_id")) {
      while (rs.next()) {
        out.add(
            new Row(
                rs.getLong(1),
                rs.getString(2),
                rs.getBoolean(3),
                rs.getInt(4),
                micros(rs.getObject(5, OffsetDateTime.class)),
                rs.getString(6)));
      }
    }
    return out;
  }

  private List<QueueModel.Dead> deadLetters(Q q) throws SQLException {
    List<QueueModel.Dead> out = new ArrayList<>();
    try (PreparedStatement ps =
        c(0).prepareStatement(
                "SELECT msg_id, group_id, body ->> 'k', read_ct FROM queue.dead_letter"
                    + " WHERE queue_name = ? ORDER BY dead_id")) {
      ps.setString(1, q.name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new QueueModel.Dead(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getInt(4)));
        }
      }
    }
    return out;
  }

  private long maxId(Q q) throws SQLException {
    return rows(q).stream().mapToLong(Row::id).max().orElse(0);
  }

  /**
   * Every id a queue's messages ever had, live, deleted or dead-lettered (for deletes and
   * visibility changes with current and stale ids).
   */
  List<Long> knownIds(int queue) {
    return new ArrayList<>(queues[queue].everSent);
  }

  private void sent(Q q, long id, Send s, String key) {
    q.model.send(id, s.group(), key, now + s.delaySeconds() * 1_000_000L);
    q.everSent.add(id);
    sendOrder.put(key, sendOrder.size());
  }

  private static String nextKey() {
    return "m" + keys.incrementAndGet();
  }

  private Connection c(int conn) {
    return connections.get(conn);
  }

  private void exec(int conn, String sql) throws SQLException {
    try (Statement s = c(conn).createStatement()) {
      s.execute(sql);
    }
  }

  private static ResultSet single(PreparedStatement ps) throws SQLException {
    ResultSet rs = ps.executeQuery();
    assertThat(rs.next()).isTrue();
    return rs;
  }

  private static OffsetDateTime time(long micros) {
    return OffsetDateTime.ofInstant(
        Instant.ofEpochSecond(
            Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000),
        ZoneOffset.UTC);
  }

  private static long micros(OffsetDateTime t) {
    Instant i = t.toInstant();
    return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
  }
}
