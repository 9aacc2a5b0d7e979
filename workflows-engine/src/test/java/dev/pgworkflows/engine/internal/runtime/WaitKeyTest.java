package dev.pgworkflows.engine.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Waiting worker polls are told apart by the versions they take, not by how they list them. */
class WaitKeyTest {

  @Test
  void pollsListingTheSameVersionsAreOneKind() {
    assertThat(PollTerms.waitKey(List.of(2, 1))).isEqualTo(PollTerms.waitKey(List.of(1, 2)));
    assertThat(PollTerms.waitKey(List.of(1, 2, 2))).isEqualTo(PollTerms.waitKey(List.of(2, 1)));
  }

  @Test
  void pollsOfOtherVersionsAreAnotherKind() {
    assertThat(PollTerms.waitKey(List.of(1))).isNotEqualTo(PollTerms.waitKey(List.of(1, 2)));
    assertThat(PollTerms.waitKey(List.of(3))).isNotEqualTo(PollTerms.waitKey(List.of(2)));
  }
}
