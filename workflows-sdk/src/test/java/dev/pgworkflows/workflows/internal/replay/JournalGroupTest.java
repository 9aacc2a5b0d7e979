package dev.pgworkflows.workflows.internal.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A parallel group matches the consecutive run entries whose names are its branches, in whatever
 * order they finished; the rest of its branches are new. What cannot be the group's is not
 * deterministic.
 */
class JournalGroupTest {
  private static Task.Entry run(String name) {
    return new Task.Entry(name, "run", Transport.JSON.valueToTree(name), null, false);
  }

  @Test
  void aGroupTakesItsEntriesInAnyOrderAndTheStepsAfterItMatchAsUsual() {
    Journal j = new Journal(1, List.of(run("before"), run("c"), run("a"), run("b"), run("after")));
    assertThat(j.replayed("before", "run")).isNotNull();
    assertThat(j.group(List.of("a", "b", "c")).keySet()).containsExactlyInAnyOrder("a", "b", "c");
    assertThat(j.replayed("after", "run")).isNotNull();
    assertThat(j.replayed("new", "run")).isNull();
  }

  @Test
  void aGroupCutShortByACrashHasItsMissingBranchesNew() {
    Journal j = new Journal(1, List.of(run("b")));
    assertThat(j.group(List.of("a", "b", "c")).keySet()).containsExactly("b");
    j.append(run("c"));
    j.append(run("a"));
    assertThat(j.replayed("after", "run")).isNull();
  }

  @Test
  void anotherStepWhereABranchWouldBeIsNotDeterministic() {
    Journal j = new Journal(1, List.of(run("a"), run("elsewhere"), run("b")));
    assertThatThrownBy(() -> j.group(List.of("a", "b")))
        .isInstanceOf(NonDeterministicWorkflowException.class)
        .hasMessageContaining("\"b\"")
        .hasMessageContaining("\"elsewhere\"");
  }

  @Test
  void aBranchJournaledAsAnotherKindIsNotDeterministic() {
    Journal j = new Journal(1, List.of(run("a"), new Task.Entry("b", "sleep", null, null, false)));
    assertThatThrownBy(() -> j.group(List.of("a", "b")))
        .isInstanceOf(NonDeterministicWorkflowException.class)
        .hasMessageContaining("sleep");
  }

  @Test
  void aNameUsedTwiceIsNotDeterministic() {
    assertThatThrownBy(() -> new Journal(1, List.of()).group(List.of("a", "b", "a")))
        .isInstanceOf(NonDeterministicWorkflowException.class)
        .hasMessageContaining("\"a\" is used twice");
    Journal j = new Journal(1, List.of(run("a")));
    j.replayed("a", "run");
    assertThatThrownBy(() -> j.group(List.of("b", "a")))
        .isInstanceOf(NonDeterministicWorkflowException.class)
        .hasMessageContaining("\"a\" is used twice");
    assertThatThrownBy(() -> j.group(List.of("not a name!")))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
