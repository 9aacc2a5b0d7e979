package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Once the function files differ from an earlier release's, the schema has a migration that release
 * did not: a server of that release then refuses the database (it was migrated by newer code)
 * rather than put its own functions back over the newer ones when it starts during a rolling
 * upgrade ({@code docs/upgrading.md}).
 */
class FunctionChangesCarryAMigrationTest {
  private static final Pattern MIGRATION = Pattern.compile("V(\\d+)__.*\\.sql");

  static List<Releases.Release> releases() throws Exception {
    return Releases.all();
  }

  @ParameterizedTest(name = "since {0}")
  @MethodSource("releases")
  void functionFilesChangedSinceAReleaseComeWithANewMigration(Releases.Release release)
      throws Exception {
    Path root = Releases.repositoryRoot();
    Map<String, String> then = new TreeMap<>();
    for (String name :
        git(root, "ls-tree", "--name-only", release.commit(), "sql/functions/").split("\n")) {
      if (!name.isBlank()) {
        then.put(
            Path.of(name).getFileName().toString(),
            git(root, "show", release.commit() + ":" + name));
      }
    }
    Map<String, String> now = new TreeMap<>();
    try (Stream<Path> files = Files.list(root.resolve("sql/functions"))) {
      for (Path f : files.toList()) {
        now.put(f.getFileName().toString(), Files.readString(f));
      }
    }
    int thenLatest =
        latest(
            List.of(
                git(root, "ls-tree", "--name-only", release.commit(), "sql/schema/").split("\n")));
    int nowLatest;
    try (Stream<Path> files = Files.list(root.resolve("sql/schema"))) {
      nowLatest = latest(files.map(Path::toString).toList());
    }
    assertThat(then).as("the function files of %s", release).isNotEmpty();
    if (!then.equals(now)) {
      assertThat(nowLatest)
          .as(
              "the function files changed since %s, whose latest migration is V%03d: add a migration"
                  + " to sql/schema/ (docs/upgrading.md)",
              release, thenLatest)
          .isGreaterThan(thenLatest);
    }
  }

  private static int latest(List<String> paths) {
    int latest = 0;
    for (String p : paths) {
      Matcher m =
          MIGRATION.matcher(
              Path.of(p.strip().isEmpty() ? "x" : p.strip()).getFileName().toString());
      if (m.matches()) {
        latest = Math.max(latest, Integer.parseInt(m.group(1)));
      }
    }
    return latest;
  }

  private static String git(Path root, String... args) throws IOException, InterruptedException {
    List<String> cmd = new java.util.ArrayList<>(List.of("git", "-C", root.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed: " + err.strip());
    }
    return new String(out, StandardCharsets.UTF_8);
  }
}
