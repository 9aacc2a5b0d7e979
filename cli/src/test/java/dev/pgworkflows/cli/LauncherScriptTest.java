package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The launcher {@code cli/bin/pgw} as a user runs it: a bash script that starts a JVM on the jar,
 * here a jar of this build's classes (PGW_JAR), with the server in WORKFLOWS_URL and
 * WORKFLOWS_TOKEN.
 */
class LauncherScriptTest {
  private static final Path LAUNCHER = Path.of("bin/pgw").toAbsolutePath();

  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  @TempDir static Path dir;
  private static Path jar;

  /** A jar whose manifest runs {@link Pgw} on the classes and libraries this test runs on. */
  @BeforeAll
  static void jarOfThisBuild() throws IOException {
    String classPath =
        Stream.of(
                Pgw.class,
                CommandLine.class,
                ObjectMapper.class,
                JsonParser.class,
                JsonProperty.class)
            .map(c -> c.getProtectionDomain().getCodeSource().getLocation().toString())
            .distinct()
            .collect(Collectors.joining(" "));
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, Pgw.class.getName());
    manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, classPath);
    jar = dir.resolve("pgw.jar");
    try (OutputStream out = Files.newOutputStream(jar)) {
      // The manifest is the whole jar.
      new JarOutputStream(out, manifest).finish();
    }
  }

  record Run(int exit, String out, String err) {}

  private static Run launch(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(LAUNCHER.toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("WORKFLOWS_URL");
    pb.environment().remove("WORKFLOWS_TOKEN");
    pb.environment().put("PGW_JAR", jar.toString());
    pb.environment().putAll(env);
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("pgw ended").isTrue();
    return new Run(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  private static Map<String, String> toServer() {
    return Map.of("WORKFLOWS_URL", server.url(), "WORKFLOWS_TOKEN", TestServer.TOKEN);
  }

  @Test
  void theScriptTalksToTheServerInTheEnvironment() throws Exception {
    Run created = launch(toServer(), "queues", "create", "launched", "--fifo");
    assertThat(created.exit()).as(created.err()).isZero();
    assertThat(created.out()).startsWith("QUEUE").containsPattern("(?m)^launched +yes ");

    Run json = launch(toServer(), "queues", "--json");
    assertThat(json.exit()).isZero();
    assertThat(Json.MAPPER.readTree(json.out()).get("queues").findValuesAsText("name"))
        .contains("launched");
  }

  @Test
  void theScriptPassesTheExitCodeOn() throws Exception {
    Run missing = launch(toServer(), "runs", "get", "order", "99999");
    assertThat(missing.exit()).isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(missing.err()).startsWith("pgw: 404 Not Found: ");
    assertThat(missing.err().lines()).hasSize(1);

    assertThat(launch(toServer(), "runs", "get").exit()).isEqualTo(ExitCodes.USAGE);
    Run away = launch(Map.of("WORKFLOWS_URL", "http://127.0.0.1:1"), "workflows");
    assertThat(away.exit()).isEqualTo(ExitCodes.UNREACHABLE);
  }

  @Test
  void withoutItsJarTheScriptSaysHowToBuildIt() throws Exception {
    Run r = launch(Map.of("PGW_JAR", dir.resolve("absent.jar").toString()), "workflows");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("no jar at").contains("./mvnw");
  }

  @Test
  void theCompletionScriptLoadsIntoBash() throws Exception {
    Run script = launch(Map.of(), "completion");
    assertThat(script.exit()).isZero();
    assertThat(script.out()).contains("complete -F").contains("queues").contains("redrive-parked");
    Path file = dir.resolve("pgw-completion.bash");
    Files.writeString(file, script.out());
    Process bash =
        new ProcessBuilder("bash", "-c", "source '" + file + "' && complete -p pgw")
            .redirectErrorStream(true)
            .start();
    String said = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(bash.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(bash.exitValue()).as(said).isZero();
    assertThat(said).contains("pgw");
  }
}
