package dev.pgworkflows.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The page docs/without-a-server.md prints the body of {@link WithoutAServer#main} as it is: the
 * build runs that class (see .ci/run), so the block runs as printed.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class WithoutAServerPageTest {
  private static final String HEADING = "## Without a server";

  @Test
  void thePageBlockIsTheExampleThatTheBuildRuns() throws IOException {
    List<String> readme = Files.readAllLines(Path.of("../docs/without-a-server.md"));
    int at = readme.indexOf(HEADING);
    assertThat(at).as("docs/without-a-server.md has \"%s\"", HEADING).isNotNegative();
    int open = readme.subList(at, readme.size()).indexOf("```java") + at;
    assertThat(open).isGreaterThan(at);
    List<String> block = new ArrayList<>();
    for (String line : readme.subList(open + 1, readme.size())) {
      if (line.equals("```")) {
        break;
      }
      block.add(line);
    }
    List<String> source =
        Files.readAllLines(Path.of("src/main/java/dev/pgworkflows/examples/WithoutAServer.java"));
    int begin = source.indexOf("    // docs: begin");
    int end = source.indexOf("    // docs: end");
    List<String> body =
        source.subList(begin + 1, end).stream()
            .map(l -> l.startsWith("    ") ? l.substring(4) : l)
            .toList();
    assertThat(block).isEqualTo(body);
  }
}
