package dev.pgworkflows.engine.internal.db;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * Where the database is. Accepts JDBC URLs and libpq-style {@code postgresql://user:pw@host/db}
 * URLs, with several hosts ({@code h1:5432,h2:5432,[::1]:5433}) and {@code target_session_attrs}
 * too (several hosts without it mean the primary); credentials in the URL count only when the
 * separate variables are absent.
 */
public record ConnectionInfo(String jdbcUrl, Optional<String> user, Optional<String> password) {

  public static ConnectionInfo parse(String url, Optional<String> user, Optional<String> password) {
    if (url.startsWith("jdbc:")) {
      return new ConnectionInfo(url, user, password);
    }
    String rest;
    if (url.startsWith("postgresql://")) {
      rest = url.substring("postgresql://".length());
    } else if (url.startsWith("postgres://")) {
      rest = url.substring("postgres://".length());
    } else {
      throw new IllegalArgumentException(
          "DATABASE_URL must start with postgresql://, postgres:// or jdbc:postgresql://");
    }
    // Read by hand, as libpq reads it: java.net.URI takes no host list, and its messages would
    // quote the password. The authority ends at the first '/' or '?' ('/' and '?' in a password
    // are percent-encoded); the user info ends at its last '@', so a literal '@' in a password
    // still works.
    int end = rest.length();
    for (char c : new char[] {'/', '?'}) {
      int i = rest.indexOf(c);
      if (i >= 0 && i < end) {
        end = i;
      }
    }
    String authority = rest.substring(0, end);
    String tail = rest.substring(end);
    int at = authority.lastIndexOf('@');
    Optional<String> u = user;
    Optional<String> p = password;
    if (at >= 0) {
      String userInfo = authority.substring(0, at);
      int colon = userInfo.indexOf(':');
      String name = decode(colon < 0 ? userInfo : userInfo.substring(0, colon), "the user name");
      if (!name.isEmpty()) {
        u = u.or(() -> Optional.of(name));
      }
      if (colon >= 0) {
        String pw = decode(userInfo.substring(colon + 1), "the password");
        p = p.or(() -> Optional.of(pw));
      }
    }
    List<String> hosts = hosts(authority.substring(at + 1));
    String path = tail;
    String query = null;
    int q = tail.indexOf('?');
    if (q >= 0) {
      path = tail.substring(0, q);
      query = tail.substring(q + 1);
    }
    if (path.isEmpty()) {
      path = "/";
    }
    if (path.indexOf('/', 1) >= 0 || path.indexOf('#') >= 0) {
      throw malformed("the database name after the hosts must be one path segment");
    }
    List<String> params = query == null || query.isEmpty() ? new ArrayList<>() : jdbcQuery(query);
    // libpq connects to any of several hosts unless told otherwise; a queue server must write, so
    // several hosts without target_session_attrs mean the primary.
    if (hosts.size() > 1 && params.stream().noneMatch(x -> x.startsWith("targetServerType="))) {
      params.add("targetServerType=primary");
    }
    String jdbc =
        "jdbc:postgresql://"
            + String.join(",", hosts)
            + path
            + (params.isEmpty() ? "" : "?" + String.join("&", params));
    return new ConnectionInfo(jdbc, u, p);
  }

  /** host[:port] or [ipv6][:port], separated by commas. */
  private static List<String> hosts(String list) {
    List<String> hosts = new ArrayList<>();
    for (String host : list.split(",", -1)) {
      String port;
      if (host.startsWith("[")) {
        int close = host.indexOf(']');
        if (close < 2) {
          throw malformed("\"" + host + "\" is not a host: an IPv6 address is [address][:port]");
        }
        port = host.substring(close + 1);
        if (!port.isEmpty() && !port.startsWith(":")) {
          throw malformed("\"" + host + "\" is not a host: an IPv6 address is [address][:port]");
        }
        port = port.isEmpty() ? "" : port.substring(1);
      } else {
        int colon = host.indexOf(':');
        String name = colon < 0 ? host : host.substring(0, colon);
        if (name.isEmpty() || !name.matches("[A-Za-z0-9._%\\-]+")) {
          throw malformed("\"" + host + "\" is not a host[:port]");
        }
        port = colon < 0 ? "" : host.substring(colon + 1);
        if (colon >= 0 && port.isEmpty()) {
          throw malformed("\"" + host + "\" has an empty port");
        }
      }
      if (!port.isEmpty() && !(port.matches("[0-9]{1,5}") && Integer.parseInt(port) <= 65535)) {
        throw malformed("\"" + host + "\" has no valid port");
      }
      hosts.add(host);
    }
    return hosts;
  }

  /** Percent-decoding as in a URL's user info: UTF-8, and '+' stays '+'. */
  private static String decode(String s, String what) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length()
            || Character.digit(s.charAt(i + 1), 16) < 0
            || Character.digit(s.charAt(i + 2), 16) < 0) {
          throw malformed(what + " has a '%' not followed by two hex digits");
        }
        out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        byte[] b = String.valueOf(c).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
      }
    }
    return out.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** A message that names the variable and never quotes the password. */
  private static IllegalArgumentException malformed(String why) {
    return new IllegalArgumentException(
        "DATABASE_URL is not a valid postgresql://[user[:password]@]host[:port][,host[:port]...]"
            + "[/database][?param=value...] URL: "
            + why);
  }

  /**
   * libpq's {@code target_session_attrs} as pgjdbc's {@code targetServerType}, which is what makes
   * a multi-host URL connect to the primary only; other parameters pass as they are.
   */
  private static List<String> jdbcQuery(String query) {
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
    return out;
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
