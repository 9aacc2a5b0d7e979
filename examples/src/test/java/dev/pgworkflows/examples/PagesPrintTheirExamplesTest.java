package dev.pgworkflows.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A page's Java block is, line for line, the body of an example class between its {@code // docs:
 * begin} and {@code // docs: end} markers; the build runs those classes (see .ci/run), so each
 * block runs as printed.
 */
class PagesPrintTheirExamplesTest {
  @Test
  void withoutAServerPrintsTheExampleThatTheBuildRuns() throws IOException {
    assertThat(block("../docs/without-a-server.md", "## Without a server"))
        .isEqualTo(body("WithoutAServer.java"));
  }

  @Test
  void theReadmePrintsTheWorkflowThatTheBuildRuns() throws IOException {
    assertThat(block("../README.md", "## One workflow in Java")).isEqualTo(body("FrontDoor.java"));
  }

  @Test
  void theReadmePrintsTheCartThatTheBuildRuns() throws IOException {
    assertThat(block("../README.md", "## A cart made by its first update"))
        .isEqualTo(body("LazyCart.java"));
  }

  @Test
  void theReadmePrintsTheDeploysThatTheBuildRuns() throws IOException {
    assertThat(block("../README.md", "## One deploy per branch"))
        .isEqualTo(body("NewestDeploy.java"));
  }

  @Test
  void theReadmePrintsTheBatchesThatTheBuildRuns() throws IOException {
    assertThat(block("../README.md", "## Clicks in batches, starts in turn"))
        .isEqualTo(body("ClickBatches.java"));
  }

  @Test
  void theReadmePrintsTheGpuStepsThatTheBuildRuns() throws IOException {
    assertThat(block("../README.md", "## Steps on the workers that can run them"))
        .isEqualTo(body("GpuSteps.java"));
  }

  @Test
  void theReadmePrintsTheInvoicesThatTheBuildRuns() throws IOException {
    assertThat(block("../README.md", "## Runs found by what they are about"))
        .isEqualTo(body("FindRuns.java"));
  }

  /** The first Java block under the heading of the page. */
  private static List<String> block(String page, String heading) throws IOException {
    List<String> lines = Files.readAllLines(Path.of(page));
    int at = lines.indexOf(heading);
    assertThat(at).as("%s has \"%s\"", page, heading).isNotNegative();
    int open = lines.subList(at, lines.size()).indexOf("```java") + at;
    assertThat(open).isGreaterThan(at);
    List<String> block = new ArrayList<>();
    for (String line : lines.subList(open + 1, lines.size())) {
      if (line.equals("```")) {
        break;
      }
      block.add(line);
    }
    return block;
  }

  /** The lines between the markers of an example, one level of indentation off. */
  private static List<String> body(String example) throws IOException {
    List<String> source =
        Files.readAllLines(Path.of("src/main/java/dev/pgworkflows/examples/" + example));
    int begin = source.indexOf("    // docs: begin");
    int end = source.indexOf("    // docs: end");
    assertThat(begin).as("%s marks its block", example).isNotNegative().isLessThan(end);
    return source.subList(begin + 1, end).stream()
        .filter(l -> !l.matches("\\s*// spotless:(off|on)"))
        .map(l -> l.startsWith("    ") ? l.substring(4) : l)
        .toList();
  }
}
