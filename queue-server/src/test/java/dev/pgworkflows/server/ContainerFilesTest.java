package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml and the Dockerfile, checked without a Docker engine: the compose file wires
 * the server to PostgreSQL with health checks and a volume, and the image builds with the same
 * wrapper command the README gives. (.ci/run also runs `docker-compose config` when installed.)
 */
class ContainerFilesTest {
  private static final Path ROOT = Path.of("..");

  @Test
  void composeRunsTheServerAgainstPostgresWithHealthChecks() throws Exception {
    JsonNode compose =
        new ObjectMapper(new YAMLFactory()).readTree(ROOT.resolve("docker-compose.yml").toFile());
    JsonNode pg = compose.at("/services/postgres");
    JsonNode server = compose.at("/services/queue-server");
    assertThat(pg.get("image").asText()).startsWith("postgres:");
    assertThat(pg.at("/healthcheck/test").toString()).contains("pg_isready");
    assertThat(pg.get("volumes").get(0).asText()).startsWith("pgdata:");
    assertThat(compose.at("/volumes").has("pgdata")).isTrue();
    assertThat(server.get("build").asText()).isEqualTo(".");
    assertThat(server.at("/depends_on/postgres/condition").asText()).isEqualTo("service_healthy");
    assertThat(server.at("/environment/DATABASE_URL").asText()).contains("//postgres:5432/");
    assertThat(server.at("/healthcheck/test").toString()).contains("/readyz");
    assertThat(server.get("ports").get(0).asText()).isEqualTo("7700:7700");
    // Published beyond loopback, so it listens on every interface and must be given tokens.
    assertThat(server.at("/environment/WORKFLOWS_BIND").asText()).isEqualTo("0.0.0.0");
    assertThat(server.at("/environment/WORKFLOWS_API_TOKENS").asText())
        .startsWith("${WORKFLOWS_API_TOKENS:?");
  }

  @Test
  void theImageBuildsWithTheReadmesWrapperAndRunsTheFatJar() throws Exception {
    String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
    String readme = Files.readString(ROOT.resolve("README.md"));
    assertThat(dockerfile)
        .contains("./mvnw -B -q -DskipTests")
        .contains("queue-server/target/queue-server.jar")
        .contains("WORKFLOWS_BIND=0.0.0.0");
    assertThat(readme).contains("./mvnw -B -q install -DskipTests").contains("./mvnw -B verify");
    assertThat(Files.readString(ROOT.resolve(".ci/run"))).contains("./mvnw -B verify");
  }
}
