package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.internal.http.OperatorAudit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The audit trail's actions are listed in one place in the code ({@link OperatorAudit#actions()}),
 * and openapi.yaml and docs/operating.md list exactly those, no more and no fewer.
 */
class AuditActionsAreListedOnceTest {
  private static final String MARKER = "The actions, all of them:";
  private static final Pattern ACTION = Pattern.compile("`([a-z][a-z_-]*(?:\\.[a-z][a-z_-]*)+)`");

  /** The backticked actions after the marker, up to the sentence's end. */
  private static SortedSet<String> listed(String file) throws IOException {
    String text = Files.readString(Path.of(file));
    int at = text.indexOf(MARKER);
    assertThat(at).as("%s lists the actions after \"%s\"", file, MARKER).isNotNegative();
    String list = text.substring(at + MARKER.length(), text.indexOf("`.", at) + 2);
    SortedSet<String> out = new TreeSet<>();
    Matcher m = ACTION.matcher(list);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  @Test
  void theSpecAndTheOperatingPageListEveryActionTheTrailRecords() throws IOException {
    SortedSet<String> actions = OperatorAudit.actions();
    assertThat(actions).contains("tokens.configured", "workflow.throttle", "run.cancel");
    assertThat(listed("../openapi.yaml")).isEqualTo(actions);
    assertThat(listed("../docs/operating.md")).isEqualTo(actions);
  }
}
