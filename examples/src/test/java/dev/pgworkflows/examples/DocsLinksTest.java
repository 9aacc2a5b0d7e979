package dev.pgworkflows.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documentation holds together: every relative link of the README, the changelog, the SQL model
 * and the pages of {@code docs/} reaches a file of the repository (but the Javadoc a page links to,
 * which the build makes), and a link into a page reaches one of its headings; every page of {@code
 * docs/} is in the site's navigation ({@code mkdocs.yml}) and every page the navigation names
 * exists.
 */
class DocsLinksTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern NAV_PAGE = Pattern.compile(":\\s+([\\w-]+\\.md)\\s*$");

  private static List<Path> pages() throws IOException {
    List<Path> out = new ArrayList<>();
    out.add(ROOT.resolve("README.md"));
    out.add(ROOT.resolve("CHANGELOG.md"));
    out.add(ROOT.resolve("sql/README.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
    }
    return out;
  }

  @Test
  void everyLinkReachesAFileAndEveryAnchorAHeading() throws IOException {
    List<String> checked = new ArrayList<>();
    assertThat(broken(pages(), checked)).as("broken links").isEmpty();
    assertThat(checked).as("links checked").hasSizeGreaterThan(50);
  }

  @Test
  void aLinkToAMissingFileOrHeadingIsFound(@TempDir Path dir) throws IOException {
    Path page = dir.resolve("page.md");
    Files.writeString(
        page,
        String.join(
            "\n",
            "# Page",
            "## A heading",
            "[here](#a-heading) [there](#no-heading) [gone](other.md)",
            "`[code](nowhere.md)`",
            "```",
            "[fenced](nowhere.md)",
            "```"));
    assertThat(broken(List.of(page), new ArrayList<>()))
        .containsExactly(
            "page.md: #no-heading (no such heading)", "page.md: other.md (no such file)");
  }

  /** The links of these pages that reach no file, or no heading of a page; adds each checked. */
  private static List<String> broken(List<Path> pages, List<String> checked) throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : pages) {
      for (String target : links(page)) {
        if (target.matches("^(https?|mailto):.*")) {
          continue;
        }
        if (page.getParent().endsWith("docs") && target.startsWith("api/")) {
          continue; // the Javadoc the build puts beside the site's pages; .ci/run checks those
        }
        checked.add(target);
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path to = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        String where =
            (page.startsWith(ROOT) ? ROOT.relativize(page) : page.getFileName()) + ": " + target;
        if (!Files.exists(to)) {
          broken.add(where + " (no such file)");
        } else if (anchor != null
            && to.toString().endsWith(".md")
            && !anchors(to).contains(anchor)) {
          broken.add(where + " (no such heading)");
        }
      }
    }
    return broken;
  }

  @Test
  void everyPageIsInTheSiteNavigationAndEveryEntryIsAPage() throws IOException {
    Set<String> nav = new TreeSet<>();
    boolean inNav = false;
    for (String line : Files.readAllLines(ROOT.resolve("mkdocs.yml"))) {
      if (line.startsWith("nav:")) {
        inNav = true;
      } else if (inNav && !line.startsWith(" ")) {
        inNav = false;
      }
      Matcher m = NAV_PAGE.matcher(line);
      if (inNav && m.find()) {
        nav.add(m.group(1));
      }
    }
    Set<String> files = new TreeSet<>();
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".md")).forEach(files::add);
    }
    assertThat(nav).as("pages in mkdocs.yml's nav").isEqualTo(files);
  }

  /** The link targets of a Markdown file, outside code blocks and code spans. */
  private static List<String> links(Path page) throws IOException {
    List<String> out = new ArrayList<>();
    boolean fence = false;
    for (String line : Files.readAllLines(page)) {
      if (line.startsWith("```")) {
        fence = !fence;
        continue;
      }
      if (fence) {
        continue;
      }
      Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
      while (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  /** The anchors of a Markdown file's headings, as GitHub and MkDocs make them. */
  static Set<String> anchors(Path page) throws IOException {
    Set<String> out = new HashSet<>();
    boolean fence = false;
    for (String line : Files.readAllLines(page)) {
      if (line.startsWith("```")) {
        fence = !fence;
      }
      if (!fence && line.matches("^#{1,6} .*")) {
        String text = line.replaceFirst("^#+ ", "").replace("`", "").toLowerCase(Locale.ROOT);
        out.add(text.replaceAll("[^\\p{L}\\p{N}\\- _]", "").replace(' ', '-'));
      }
    }
    return out;
  }
}
