package dev.pgworkflows.engine.internal.db;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The settings that decide whether a commit the database acknowledged survives a crash of its
 * machine, as the server's own sessions see them (a role or database may set {@code
 * synchronous_commit} apart from the server's configuration).
 */
public record Durability(String fsync, String synchronousCommit, String fullPageWrites) {

  /** Reads them on {@code c}. */
  public static Durability read(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "select current_setting('fsync'), current_setting('synchronous_commit'),"
                    + " current_setting('full_page_writes')")) {
      rs.next();
      return new Durability(rs.getString(1), rs.getString(2), rs.getString(3));
    }
  }

  /**
   * Whether an acknowledged commit is on disk: fsync on, and a commit waits for its WAL flush
   * (every {@code synchronous_commit} but {@code off} waits at least for the local one).
   */
  public boolean flushesCommits() {
    return "on".equals(fsync) && !"off".equals(synchronousCommit);
  }

  /** As {@code /readyz} shows them. */
  public Map<String, String> asJson() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("fsync", fsync);
    m.put("synchronousCommit", synchronousCommit);
    m.put("fullPageWrites", fullPageWrites);
    return m;
  }

  @Override
  public String toString() {
    return "fsync="
        + fsync
        + ", synchronous_commit="
        + synchronousCommit
        + ", full_page_writes="
        + fullPageWrites;
  }
}
