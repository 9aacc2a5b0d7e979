package dev.pgworkflows.engine.internal.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** DATABASE_URL in its accepted forms, one host or several. */
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
    assertThat(info.jdbcUrl()).isEqualTo("jdbc:postgresql://h1,h2/orders?targetServerType=primary");
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

  @Test
  void ipv6HostsInBracketsStayWholeInAHostList() {
    ConnectionInfo info =
        ConnectionInfo.parse(
            "postgresql://app:pw@[fd00::1]:5432,[fd00::2],db3:5433/orders"
                + "?target_session_attrs=read-write",
            Optional.empty(),
            Optional.empty());
    assertThat(info.jdbcUrl())
        .isEqualTo(
            "jdbc:postgresql://[fd00::1]:5432,[fd00::2],db3:5433/orders?targetServerType=primary");
    assertThat(info.user()).contains("app");
  }

  @Test
  void anAtSignInThePasswordWorksPercentEncodedOrLiteral() {
    ConnectionInfo encoded =
        ConnectionInfo.parse(
            "postgresql://app:p%40ss%3Aw%2Frd@h1,h2/orders", Optional.empty(), Optional.empty());
    assertThat(encoded.password()).contains("p@ss:w/rd");
    assertThat(encoded.user()).contains("app");
    assertThat(encoded.jdbcUrl())
        .isEqualTo("jdbc:postgresql://h1,h2/orders?targetServerType=primary");

    ConnectionInfo literal =
        ConnectionInfo.parse(
            "postgresql://app:p@ss@db:5432/orders", Optional.empty(), Optional.empty());
    assertThat(literal.password()).contains("p@ss");
    assertThat(literal.user()).contains("app");
    assertThat(literal.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/orders");
  }

  @Test
  void severalHostsWithoutTargetSessionAttrsMeanThePrimary() {
    ConnectionInfo info =
        ConnectionInfo.parse(
            "postgresql://h1:5432,h2:5432/orders?sslmode=require",
            Optional.empty(),
            Optional.empty());
    assertThat(info.jdbcUrl())
        .isEqualTo(
            "jdbc:postgresql://h1:5432,h2:5432/orders?sslmode=require&targetServerType=primary");
    assertThat(
            ConnectionInfo.parse(
                    "postgresql://h1,h2/orders?target_session_attrs=any",
                    Optional.empty(),
                    Optional.empty())
                .jdbcUrl())
        .isEqualTo("jdbc:postgresql://h1,h2/orders?targetServerType=any");
    assertThat(
            ConnectionInfo.parse("postgresql://h1/orders", Optional.empty(), Optional.empty())
                .jdbcUrl())
        .isEqualTo("jdbc:postgresql://h1/orders");
  }

  @Test
  void aMalformedUrlIsRefusedNamingTheVariableAndNotThePassword() {
    for (String url :
        List.of(
            "postgresql://app:secret@/orders",
            "postgresql://app:secret@h1,,h2/orders",
            "postgresql://app:secret@h1:port/orders",
            "postgresql://app:secret@h1:99999/orders",
            "postgresql://app:secret@[fd00::1/orders",
            "postgresql://app:secret@[fd00::1]x/orders",
            "postgresql://app:secret%zz@h1/orders",
            "postgresql://app:secret@h 1/orders",
            "postgresql://app:secret@h1/orders/extra")) {
      assertThatThrownBy(() -> ConnectionInfo.parse(url, Optional.empty(), Optional.empty()))
          .as(url)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("DATABASE_URL ")
          .hasMessageNotContaining("secret");
    }
  }
}
