package dev.pgworkflows.engine.internal.store;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.WorkerSeen;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The workers registry's functions: a server's report, the expiry, the listing. */
public final class WorkerStore {
  /** One worker of one workflow, as last seen. */
  public record Seen(
      String id,
      String workflow,
      String host,
      List<Integer> versions,
      Integer slots,
      String mode,
      long agoMs,
      Map<String, String> labels) {}

  /** A worker of a workflow that said goodbye (or that this server forgets as it stops). */
  public record Gone(String id, String workflow) {}

  private static final TypeReference<TreeMap<String, String>> LABELS = new TypeReference<>() {};

  private final Sql sql;

  public WorkerStore(Sql sql) {
    this.sql = sql;
  }

  /** Writes what server {@code server} sees now, and deletes the workers that said goodbye. */
  public void report(String server, List<Seen> seen, List<Gone> gone) {
    sql.one(
        "SELECT 1 FROM queue.worker_report(?, ?::jsonb, ?::jsonb)",
        rs -> 1,
        server,
        Json.write(seen),
        Json.write(gone));
  }

  /** Deletes up to {@code limit} workers not seen for {@code expiryMs}; returns how many went. */
  public int expire(long expiryMs, int limit) {
    return sql.one("SELECT queue.worker_expire(?, ?)", rs -> rs.getInt(1), expiryMs, limit)
        .orElse(0);
  }

  /** The workers seen within {@code expiryMs}, of one workflow or (null) all. */
  public List<WorkerSeen> list(String workflow, long expiryMs) {
    return sql.list(
        "SELECT * FROM queue.worker_list(?, ?)", WorkerStore::worker, workflow, expiryMs);
  }

  private static WorkerSeen worker(ResultSet rs) throws SQLException {
    Array a = rs.getArray("versions");
    List<String> versions = new ArrayList<>();
    for (Object v : (Object[]) a.getArray()) {
      versions.add(String.valueOf(v));
    }
    return new WorkerSeen(
        rs.getString("worker_id"),
        rs.getString("workflow_name"),
        rs.getString("host"),
        versions,
        (Integer) rs.getObject("slots"),
        rs.getString("mode"),
        rs.getString("server_id"),
        rs.getTimestamp("last_seen").toInstant(),
        Json.read(rs.getString("labels"), LABELS));
  }
}
