package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Waiting worker polls are told apart by the versions they take, not by how they list them; by
 * labels, which may give them other runs; and by worker only where runs stick to their worker.
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
  void pollsOfOtherLabelsAreAnotherKindAndOfOtherWorkersOnlyWhereRunsStick() {
    PollTerms plain = new PollTerms(List.of(1), 4, 60);
    WorkerIdentity a = new WorkerIdentity("a", "h", 4);
    WorkerIdentity b = new WorkerIdentity("b", "h", 4);
    assertThat(plain.of(a, false).waitKey()).isEqualTo(plain.of(b, false).waitKey());
    assertThat(plain.of(a, true).waitKey()).isNotEqualTo(plain.of(b, true).waitKey());
    assertThat(plain.of(a, true).waitKey())
        .isEqualTo(plain.of(new WorkerIdentity("a", "h", 8), true).waitKey());
    PollTerms gpu = plain.of(new WorkerIdentity("a", "h", 4, Map.of("gpu", "true")), false);
    assertThat(gpu.waitKey()).isNotEqualTo(plain.of(a, false).waitKey());
  }
}
