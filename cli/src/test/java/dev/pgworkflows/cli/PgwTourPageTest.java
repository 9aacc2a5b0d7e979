package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tour of {@code pgw} in docs/operating.md, as printed: every {@code cli/bin/pgw} line of its
 * console block runs, in order, against a fresh server, succeeds and prints what the page shows
 * (times aside). The transcript is written to target/pgw-tour.txt.
 */
class PgwTourPageTest {
  private static final Path PAGE = Path.of("../docs/operating.md");
  private static final String HEADING = "## The pgw command line";
  private static final String PROMPT = "$ cli/bin/pgw ";
  private static final Pattern TIME =
      Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");

  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  /** The first console block under the heading, from its first {@code cli/bin/pgw} line on. */
  static List<String> tour() throws IOException {
    List<String> lines = Files.readAllLines(PAGE);
    int at = lines.indexOf(HEADING);
    assertThat(at).as("docs/operating.md has \"%s\"", HEADING).isNotNegative();
    int open = lines.subList(at, lines.size()).indexOf("```console") + at;
    assertThat(open).as("a console block under the heading").isGreaterThan(at);
    List<String> block = new ArrayList<>();
    for (String line : lines.subList(open + 1, lines.size())) {
      if (line.equals("```")) {
        break;
      }
      if (!block.isEmpty() || line.startsWith(PROMPT)) {
        block.add(line);
      }
    }
    return block;
  }

  /** The text with every time replaced: those differ from one run to the next. */
  private static String timeless(String text) {
    return TIME.matcher(text).replaceAll("<time>");
  }

  @Test
  void everyCommandOfTheTourSucceedsAndPrintsWhatThePageShows() throws IOException {
    List<String> tour = tour();
    List<String> commands =
        tour.stream()
            .filter(l -> l.startsWith(PROMPT))
            .map(l -> l.substring(PROMPT.length()))
            .toList();
    assertThat(commands).hasSizeGreaterThan(10);
    Cli pgw = new Cli(server::url, TestServer.TOKEN);
    StringBuilder transcript = new StringBuilder();
    for (String command : commands) {
      Cli.Result r = pgw.run(ShellWords.split(command).toArray(String[]::new));
      transcript.append(PROMPT).append(command).append('\n').append(r.out()).append(r.err());
      assertThat(r.exit()).as("pgw %s: %s", command, r.err()).isZero();
    }
    Files.writeString(Path.of("target/pgw-tour.txt"), transcript);
    assertThat(timeless(transcript.toString()))
        .as("the page's tour, as target/pgw-tour.txt has it")
        .isEqualTo(timeless(String.join("\n", tour) + "\n"));
  }

  @Test
  void wordsAreSplitAsBashSplitsThem() {
    assertThat(ShellWords.split("runs start hello --input '{\"name\": \"Ada\"}' --key \"a b\""))
        .containsExactly(
            "runs", "start", "hello", "--input", "{\"name\": \"Ada\"}", "--key", "a b");
  }
}
