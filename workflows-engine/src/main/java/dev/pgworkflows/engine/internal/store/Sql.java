package dev.pgworkflows.engine.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The few shapes of JDBC call the server makes: one statement with positional parameters, mapped to
 * rows. SQLExceptions leave as {@link DatabaseException} for the HTTP edge to translate.
 */
public final class Sql {
  /** Maps the current row. */
  @FunctionalInterface
  public interface Row<T> {
    T map(ResultSet rs) throws SQLException;
  }

  /** Work on one connection. */
  @FunctionalInterface
  public interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  private final DataSource dataSource;

  public Sql(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  public DataSource dataSource() {
    return dataSource;
  }

  public <T> List<T> list(String sql, Row<T> row, Object... params) {
    try (Connection c = dataSource.getConnection()) {
      return list(c, sql, row, params);
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  public <T> Optional<T> one(String sql, Row<T> row, Object... params) {
    List<T> rows = list(sql, row, params);
    return rows.isEmpty() ? Optional.empty() : Optional.ofNullable(rows.get(0));
  }

  /**
   * Work on one connection in autocommit: each statement its own transaction. For one statement
   * that needs the connection (to make an array parameter, say), this is one round trip, where a
   * transaction around it would add a BEGIN and a COMMIT, the COMMIT a round trip of its own.
   */
  public <T> T onConnection(Work<T> work) {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  public static <T> List<T> list(Connection c, String sql, Row<T> row, Object... params)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      List<T> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(row.map(rs));
        }
      }
      return out;
    }
  }
}
