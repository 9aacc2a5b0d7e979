package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Waiting worker polls are told apart by the versions they take, not by how they list them, and by
 * the worker and labels that may give them runs others do not get.
 */
class WaitKeyTest {

  private static String key(List<Integer> versions) {
    return new PollTerms(versions, 1, 60).waitKey();
  }

  @Test
  void pollsListingTheSameVersionsAreOneKind() {
    assertThat(key(List.of(2, 1))).isEqualTo(key(List.of(1, 2)));
    assertThat(key(List.of(1, 2, 2))).isEqualTo(key(List.of(2, 1)));
  }

  @Test
  void pollsOfOtherVersionsAreAnotherKind() {
    assertThat(key(List.of(1))).isNotEqualTo(key(List.of(1, 2)));
    assertThat(key(List.of(3))).isNotEqualTo(key(List.of(2)));
  }

  @Test
  void pollsOfOtherWorkersOrLabelsAreAnotherKind() {
    PollTerms plain = new PollTerms(List.of(1), 4, 60);
    PollTerms a = plain.of(new WorkerIdentity("a", "h", 4));
    PollTerms gpu = plain.of(new WorkerIdentity("a", "h", 4, Map.of("gpu", "true")));
    assertThat(a.waitKey()).isNotEqualTo(plain.waitKey());
    assertThat(gpu.waitKey()).isNotEqualTo(a.waitKey());
    assertThat(plain.of(new WorkerIdentity("a", "h", 8)).waitKey()).isEqualTo(a.waitKey());
  }
}
