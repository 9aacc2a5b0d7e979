package dev.pgworkflows.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NamesTest {
  @Test
  void aWorkflowNameLeavesRoomForItsQueuePrefix() {
    String longest = "a".repeat(43);
    assertThat(Names.isWorkflowName(longest)).isTrue();
    assertThat(Names.isWorkflowName(longest + "a")).isFalse();
    assertThat(Names.isQueueName(Names.workflowQueue(longest))).isTrue();
  }

  @Test
  void namesAreLowerCaseAndMayNotStartWithADash() {
    assertThat(Names.isWorkflowName("onboard-user_2")).isTrue();
    assertThat(Names.isWorkflowName("-x")).isFalse();
    assertThat(Names.isWorkflowName("Onboard")).isFalse();
    assertThat(Names.isWorkflowName("")).isFalse();
    assertThat(Names.isWorkflowName(null)).isFalse();
    assertThat(Names.isWorkflowQueue("__wf_x")).isTrue();
    assertThat(Names.isWorkflowQueue("orders")).isFalse();
  }
}
