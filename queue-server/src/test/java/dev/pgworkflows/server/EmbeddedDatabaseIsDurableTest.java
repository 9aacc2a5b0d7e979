package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded PostgreSQL a user runs keeps what it acknowledged: it syncs its WAL to disk (zonky
 * starts PostgreSQL with {@code -F} and {@code synchronous_commit=off} unless told otherwise), and
 * {@code /readyz} says so.
 */
class EmbeddedDatabaseIsDurableTest {

  @Test
  void theEmbeddedDatabaseFlushesEveryCommitAndReadyzSaysSo(@TempDir Path dir) throws Exception {
    ServerConfig config =
        ServerConfig.from(
            Map.of(
                "WORKFLOWS_PORT", "0",
                "WORKFLOWS_EMBEDDED_PG_PORT", "0",
                "WORKFLOWS_DATA_DIR", dir.toString(),
                "WORKFLOWS_DB_POOL_SIZE", "4"));
    try (QueueServer server = QueueServer.start(config)) {
      // As the running database itself answers any session.
      try (Connection c = server.connectToDatabase();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "select current_setting('fsync'), current_setting('synchronous_commit'),"
                      + " current_setting('full_page_writes')")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).as("fsync").isEqualTo("on");
        assertThat(rs.getString(2)).as("synchronous_commit").isEqualTo("on");
        assertThat(rs.getString(3)).as("full_page_writes").isEqualTo("on");
      }

      Api.Response ready = new Api("http://localhost:" + server.port(), null).get("/readyz");
      assertThat(ready.status()).isEqualTo(200);
      JsonNode durability = ready.json().get("durability");
      assertThat(durability).as("/readyz: %s", ready.body()).isNotNull();
      assertThat(durability.get("fsync").asText()).isEqualTo("on");
      assertThat(durability.get("synchronousCommit").asText()).isEqualTo("on");
      assertThat(durability.get("fullPageWrites").asText()).isEqualTo("on");
    }
  }
}
