package dev.pgworkflows.server.internal.db;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;

/**
 * Where the database is. Accepts JDBC URLs and libpq-style {@code postgresql://user:pw@host/db}
 * URLs; credentials in the URL win over separate variables only when those are absent.
 */
public record ConnectionInfo(String jdbcUrl, Optional<String> user, Optional<String> password) {

  public static ConnectionInfo parse(String url, Optional<String> user, Optional<String> password) {
    if (url.startsWith("jdbc:")) {
      return new ConnectionInfo(url, user, password);
    }
    if (!url.startsWith("postgresql://") && !url.startsWith("postgres://")) {
      throw new IllegalArgumentException(
          "DATABASE_URL must start with postgresql://, postgres:// or jdbc:postgresql://");
    }
    URI uri = URI.create(url);
    Optional<String> u = user;
    Optional<String> p = password;
    if (uri.getRawUserInfo() != null) {
      String[] parts = uri.getUserInfo().split(":", 2);
      u = u.or(() -> Optional.of(parts[0]));
      if (parts.length > 1) {
        p = p.or(() -> Optional.of(parts[1]));
      }
    }
    String jdbc =
        "jdbc:postgresql://"
            + uri.getHost()
            + (uri.getPort() > 0 ? ":" + uri.getPort() : "")
            + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
            + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    return new ConnectionInfo(jdbc, u, p);
  }

  /** Without the password, which has no business in a log. */
  @Override
  public String toString() {
    return "ConnectionInfo[jdbcUrl="
        + jdbcUrl
        + ", user="
        + user.orElse("(none)")
        + ", password="
        + (password.isPresent() ? "(set)" : "(none)")
        + "]";
  }

  /**
   * A connection outside the pool and its timeouts (for LISTEN, which idles legitimately, and for
   * migrations, which may rightly run long); opening it is bounded.
   */
  public Connection connect(String applicationName) throws SQLException {
    Properties props = new Properties();
    user.ifPresent(v -> props.setProperty("user", v));
    password.ifPresent(v -> props.setProperty("password", v));
    props.setProperty("ApplicationName", applicationName);
    props.setProperty("tcpKeepAlive", "true");
    props.setProperty("connectTimeout", "5");
    props.setProperty("loginTimeout", "10");
    return DriverManager.getConnection(jdbcUrl, props);
  }
}
