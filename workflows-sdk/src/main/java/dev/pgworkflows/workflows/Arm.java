package dev.pgworkflows.workflows;

/**
 * One thing a {@link StepContext#waitForAny} or {@link StepContext#waitForAll} waits for: a signal
 * whose payload contains a match, or a child run's end ({@link ChildRun#ended()}).
 */
public record Arm(String event, Match match) {
  public Arm {
    if (event == null || event.isEmpty() || event.length() > 128) {
      throw new IllegalArgumentException("an arm's event name must be 1 to 128 characters");
    }
    if (match == null) {
      match = Match.any();
    }
  }

  /** A signal named {@code event}, any payload. */
  public static Arm event(String event) {
    return new Arm(event, Match.any());
  }

  /** A signal named {@code event} whose payload contains {@code match}. */
  public static Arm event(String event, Match match) {
    return new Arm(event, match);
  }
}
