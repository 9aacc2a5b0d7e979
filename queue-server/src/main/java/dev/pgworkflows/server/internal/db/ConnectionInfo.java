package dev.pgworkflows.server.internal.db;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * Where the database is. Accepts JDBC URLs and libpq-style {@code postgresql://user:pw@host/db}
 * URLs, with several hosts ({@code h1:5432,h2:5432}) and {@code target_session_attrs} too;
 * credentials in the URL win over separate variables only when those are absent.
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
    // Several hosts (h1:5432,h2:5432) make the authority registry-based: no host, no port, no
    // user info of its own, so both are read off the raw authority.
    String authority = uri.getRawAuthority() == null ? "" : uri.getRawAuthority();
    int at = authority.lastIndexOf('@');
    Optional<String> u = user;
    Optional<String> p = password;
    if (at >= 0) {
      String[] parts =
          URI.create("postgresql://" + authority.substring(0, at + 1) + "x/")
              .getUserInfo()
              .split(":", 2);
      u = u.or(() -> Optional.of(parts[0]));
      if (parts.length > 1) {
        p = p.or(() -> Optional.of(parts[1]));
      }
    }
    String jdbc =
        "jdbc:postgresql://"
            + authority.substring(at + 1)
            + (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
            + (uri.getRawQuery() == null ? "" : "?" + jdbcQuery(uri.getRawQuery()));
    return new ConnectionInfo(jdbc, u, p);
  }

  /**
   * libpq's {@code target_session_attrs} as pgjdbc's {@code targetServerType}, which is what makes
   * a multi-host URL connect to the primary only; other parameters pass as they are.
   */
  private static String jdbcQuery(String query) {
    List<String> out = new ArrayList<>();
    for (String param : query.split("&")) {
      if (param.startsWith("target_session_attrs=")) {
        String value = param.substring("target_session_attrs=".length());
        String type =
            switch (value) {
              case "read-write", "primary" -> "primary";
              case "read-only", "standby" -> "secondary";
              case "prefer-standby" -> "preferSecondary";
              case "any" -> "any";
              default ->
                  throw new IllegalArgumentException(
                      "DATABASE_URL: target_session_attrs must be any, read-write, read-only,"
                          + " primary, standby or prefer-standby, not \""
                          + value
                          + "\"");
            };
        out.add("targetServerType=" + type);
      } else {
        out.add(param);
      }
    }
    return String.join("&", out);
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
   * A connection outside the pool and its statement timeout (for LISTEN, and for tests); opening it
   * is bounded, and so is every wait for an answer ({@link #SOCKET_TIMEOUT_S}). The migrator opens
   * its own connections, without the socket timeout, as a migration may rightly run long.
   */
  public Connection connect(String applicationName) throws SQLException {
    Properties props = new Properties();
    user.ifPresent(v -> props.setProperty("user", v));
    password.ifPresent(v -> props.setProperty("password", v));
    props.setProperty("ApplicationName", applicationName);
    props.setProperty("tcpKeepAlive", "true");
    props.setProperty("connectTimeout", "5");
    props.setProperty("loginTimeout", "10");
    props.setProperty("socketTimeout", Integer.toString(SOCKET_TIMEOUT_S));
    return DriverManager.getConnection(jdbcUrl, props);
  }

  /**
   * How long (seconds) a {@link #connect} connection waits for any answer. Without it a host that
   * accepts the connection but never answers held the login in a socket read forever ({@code
   * loginTimeout} only stops waiting for it: the thread stayed, one more per reconnect). A LISTEN
   * connection idles without waiting on the socket: its notifications are read with waits of their
   * own, shorter than this, and its health check is a query answered at once.
   */
  public static final int SOCKET_TIMEOUT_S = 15;
}
