package dev.pgworkflows.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.examples.OnboardUser.Signup;
import dev.pgworkflows.examples.OnboardUser.User;
import dev.pgworkflows.examples.OnboardUser.Verified;
import dev.pgworkflows.testkit.ReplayCheck;
import dev.pgworkflows.testkit.ReplayFailure;
import dev.pgworkflows.testkit.ReplayReport;
import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Workflow;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The replay check as a CI gate: the onboard-user runs in flight, exported with {@code pgw journals
 * export} (see {@link RegenerateReplayJournals}), must replay through the code about to be
 * deployed. Run 1 waits for "verify" (its journal: create-user, welcome-delay, send-welcome); run 2
 * is in its welcome delay (create-user, welcome-delay).
 */
class ReplayGateTest {
  static final Path JOURNALS = Path.of("src/test/resources/replay/onboard-user");

  @Test
  void theCurrentCodeCarriesEveryRunInFlightOn() {
    ReplayReport report =
        ReplayCheck.of(OnboardUser.workflow(Duration.ofMinutes(5))).against(JOURNALS);

    report.assertCompatible();
    assertThat(report.checked()).containsExactlyInAnyOrder(1L, 2L);
  }

  @Test
  void aNewStepBehindPatchedIsCompatible() {
    ReplayCheck.of(onboard(Change.SMS_BEHIND_PATCHED)).against(JOURNALS).assertCompatible();
  }

  @Test
  void theSameNewStepWithoutPatchedFailsTheRunThatWaitsAfterIt() {
    ReplayReport report = ReplayCheck.of(onboard(Change.SMS_UNGUARDED)).against(JOURNALS);

    ReplayFailure f = only(report, 1);
    assertThat(f.position()).isEqualTo(4);
    assertThat(f.message())
        .isEqualTo(
            "replay of run 1 reached step \"send-sms\" where the journal has step \"verify\""
                + " (step 4)");
  }

  @Test
  void aReorderedStepFailsEveryRunAtTheFirstStep() {
    ReplayReport report = ReplayCheck.of(onboard(Change.DELAY_FIRST)).against(JOURNALS);

    assertThat(report.isCompatible()).isFalse();
    assertThat(report.failures()).extracting(ReplayFailure::runId).containsExactly(1L, 2L);
    for (ReplayFailure f : report.failures()) {
      assertThat(f.position()).isEqualTo(1);
      assertThat(f.message())
          .contains("reached step \"welcome-delay\" where the journal has step \"create-user\"");
    }
    assertThatThrownBy(report::assertCompatible)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("onboard-user: 2 runs replayed, 2 would fail with the new code:")
        .hasMessageContaining("run 1 (" + JOURNALS.resolve("onboard-user-1.json") + ")")
        .hasMessageContaining("run 2 (" + JOURNALS.resolve("onboard-user-2.json") + ")");
  }

  @Test
  void aRenamedStepFailsTheRunThatJournaledItUnderTheOldName() {
    ReplayReport report = ReplayCheck.of(onboard(Change.RENAMED_WELCOME)).against(JOURNALS);

    // Run 2 has not reached the welcome yet: it will journal it under the new name.
    ReplayFailure f = only(report, 1);
    assertThat(f.file()).isEqualTo(JOURNALS.resolve("onboard-user-1.json"));
    assertThat(f.position()).isEqualTo(3);
    assertThat(f.message())
        .isEqualTo(
            "replay of run 1 reached step \"send-welcome-mail\" where the journal has step"
                + " \"send-welcome\" (step 3)");
    // As docs/versions.md prints it.
    assertThatThrownBy(report::assertCompatible)
        .hasMessage(
            "onboard-user: 2 runs replayed, 1 would fail with the new code:"
                + System.lineSeparator()
                + "  run 1 (src/test/resources/replay/onboard-user/onboard-user-1.json): replay of"
                + " run 1 reached step \"send-welcome-mail\" where the journal has step"
                + " \"send-welcome\" (step 3)");
  }

  private static ReplayFailure only(ReplayReport report, long run) {
    assertThat(report.checked()).containsExactlyInAnyOrder(1L, 2L);
    assertThat(report.failures()).extracting(ReplayFailure::runId).containsExactly(run);
    return report.failures().get(0);
  }

  /** How a change to onboard-user differs from {@link OnboardUser#workflow}. */
  enum Change {
    SMS_BEHIND_PATCHED,
    SMS_UNGUARDED,
    DELAY_FIRST,
    RENAMED_WELCOME
  }

  /** {@link OnboardUser#workflow}'s body with {@code change} made to it. */
  static Workflow<Signup, Long> onboard(Change change) {
    return Workflow.define("onboard-user", Signup.class, Long.class)
        .version(1)
        .run(
            (ctx, in) -> {
              if (change == Change.DELAY_FIRST) {
                ctx.step().sleep("welcome-delay", Duration.ofMinutes(5));
              }
              User u = ctx.step().run("create-user", User.class, () -> new User(42, in.email()));
              if (change != Change.DELAY_FIRST) {
                ctx.step().sleep("welcome-delay", Duration.ofMinutes(5));
              }
              String welcome =
                  change == Change.RENAMED_WELCOME ? "send-welcome-mail" : "send-welcome";
              ctx.step().run(welcome, () -> System.out.println("welcome, " + u.email()));
              if (change == Change.SMS_UNGUARDED
                  || (change == Change.SMS_BEHIND_PATCHED && ctx.patched("welcome-sms"))) {
                ctx.step().run("send-sms", () -> System.out.println("sms to " + u.email()));
              }
              Optional<Verified> v =
                  ctx.step()
                      .waitForEvent(
                          "verify", Verified.class, Match.of("userId", u.id()), Duration.ofDays(7));
              if (v.isEmpty()) {
                ctx.step().run("nudge", () -> System.out.println("please verify, " + u.email()));
              }
              return u.id();
            });
  }
}
