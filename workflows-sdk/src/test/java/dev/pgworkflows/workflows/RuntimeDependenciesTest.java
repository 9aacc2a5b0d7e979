package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What the SDK brings into a user's runtime classpath is the list docs/installing.md's "Using it
 * from your build" gives: nothing more comes in unnoticed. The build writes the resolved list
 * (compile and runtime scope, transitive) to {@code target/runtime-dependencies.txt} before the
 * tests run.
 */
class RuntimeDependenciesTest {
  /** groupId:artifactId, as docs/installing.md lists them. */
  private static final Set<String> DOCUMENTED =
      Set.of(
          "dev.pgworkflows:protocol",
          "com.fasterxml.jackson.core:jackson-databind",
          "com.fasterxml.jackson.core:jackson-core",
          "com.fasterxml.jackson.core:jackson-annotations",
          "com.fasterxml.jackson.datatype:jackson-datatype-jsr310",
          "com.fasterxml.jackson.datatype:jackson-datatype-jdk8",
          "org.slf4j:slf4j-api",
          "io.opentelemetry:opentelemetry-api",
          "io.opentelemetry:opentelemetry-context",
          "io.opentelemetry:opentelemetry-common");

  /**
   * What the optional {@code workflows-engine} adds, for an application that works over its own
   * DataSource and puts it in its build (docs/installing.md lists these too). Maven lists them
   * among the SDK's own resolved dependencies, the test paths to the server bringing them as well.
   */
  private static final Set<String> WITH_THE_ENGINE =
      Set.of(
          "dev.pgworkflows:workflows-engine",
          "dev.pgworkflows:sql",
          "dev.pgworkflows:sweeper",
          "org.postgresql:postgresql",
          "org.checkerframework:checker-qual",
          "com.cronutils:cron-utils");

  /** A resolved artifact's line: " group:artifact:type[:classifier]:version:scope ...". */
  private static final Pattern ARTIFACT = Pattern.compile("^\\s+([\\w.\\-]+):([\\w.\\-]+):\\S+$");

  @Test
  void theSdkPullsInOnlyTheDocumentedLibrariesAtRuntime() throws IOException {
    Path list = Path.of("target", "runtime-dependencies.txt");
    assertThat(list)
        .as("written by the dependency plugin in process-test-classes; run the tests with Maven")
        .exists();
    Set<String> resolved = new TreeSet<>();
    for (String line : Files.readAllLines(list)) {
      Matcher m = ARTIFACT.matcher(line.replace(" -- module ", "\t").split("\t")[0]);
      if (m.matches()) {
        resolved.add(m.group(1) + ":" + m.group(2));
      }
    }
    // Optional ones are listed so ("(optional)") and skipped above; what the engine brings may
    // also come through the test paths to the server, which mark it otherwise.
    assertThat(resolved)
        .as(
            "the SDK's runtime dependencies; a change here belongs in docs/installing.md's"
                + " \"Using it from your build\" too")
        .containsAll(DOCUMENTED);
    assertThat(resolved)
        .as("beyond the documented ones, only what the optional engine brings")
        .isSubsetOf(
            java.util.stream.Stream.concat(DOCUMENTED.stream(), WITH_THE_ENGINE.stream()).toList());
  }
}
