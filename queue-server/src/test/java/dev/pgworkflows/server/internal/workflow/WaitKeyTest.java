package dev.pgworkflows.server.internal.workflow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Waiting worker polls are told apart by the versions they take, not by how they list them. */
class WaitKeyTest {

  @Test
  void pollsListingTheSameVersionsAreOneKind() {
    assertThat(WorkerRoutes.waitKey(List.of(2, 1))).isEqualTo(WorkerRoutes.waitKey(List.of(1, 2)));
    assertThat(WorkerRoutes.waitKey(List.of(1, 2, 2)))
        .isEqualTo(WorkerRoutes.waitKey(List.of(2, 1)));
  }

  @Test
  void pollsOfOtherVersionsAreAnotherKind() {
    assertThat(WorkerRoutes.waitKey(List.of(1))).isNotEqualTo(WorkerRoutes.waitKey(List.of(1, 2)));
    assertThat(WorkerRoutes.waitKey(List.of(3))).isNotEqualTo(WorkerRoutes.waitKey(List.of(2)));
  }
}
