package dev.pgworkflows.server.internal.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** DATABASE_URL in its accepted forms, one host or several. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ConnectionInfoTest {

  @Test
  void aJdbcUrlWithSeveralHostsPassesUnchanged() {
    String url = "jdbc:postgresql://10.0.0.1:5432,10.0.0.2:5432/db?targetServerType=primary";
    ConnectionInfo info = ConnectionInfo.parse(url, Optional.of("app"), Optional.of("pw"));
    assertThat(info.jdbcUrl()).isEqualTo(url);
    assertThat(info.user()).contains("app");
  }

  @Test
  void aLibpqUrlWithOneHostKeepsHostPortAndCredentials() {
    ConnectionInfo info =
        ConnectionInfo.parse(
            "postgresql://app:s%40cret@db.example:6432/orders?sslmode=require",
            Optional.empty(), Optional.empty());
    assertThat(info.jdbcUrl())
        .isEqualTo("jdbc:postgresql://db.example:6432/orders?sslmode=require");
    assertThat(info.user()).contains("app");
    assertThat(info.password()).contains("s@cret");
  }

  @Test
  void aLibpqUrlWithSeveralHostsBecomesAMultiHostJdbcUrlForThePrimary() {
    ConnectionInfo info =
        ConnectionInfo.parse(
            "postgres://app:pw@10.0.0.1:5432,10.0.0.2:5433/orders?target_session_attrs=read-write",
            Optional.empty(),
            Optional.empty());
    assertThat(info.jdbcUrl())
        .isEqualTo("jdbc:postgresql://10.0.0.1:5432,10.0.0.2:5433/orders?targetServerType=primary");
    assertThat(info.user()).contains("app");
    assertThat(info.password()).contains("pw");
  }

  @Test
  void separateCredentialsWinOverTheUrls() {
    ConnectionInfo info =
        ConnectionInfo.parse(
            "postgresql://app:pw@h1,h2/orders", Optional.of("other"), Optional.of("secret"));
    assertThat(info.jdbcUrl()).isEqualTo("jdbc:postgresql://h1,h2/orders");
    assertThat(info.user()).contains("other");
    assertThat(info.password()).contains("secret");
  }

  @Test
  void anUnknownTargetSessionAttrsIsRefusedByName() {
    assertThatThrownBy(
            () ->
                ConnectionInfo.parse(
                    "postgresql://h1,h2/orders?target_session_attrs=leader",
                    Optional.empty(),
                    Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("target_session_attrs")
        .hasMessageContaining("leader");
  }
}
