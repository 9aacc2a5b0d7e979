package dev.pgworkflows.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Where a run is in its life. */
public enum RunStatus {
  RUNNING,
  COMPLETED,
  FAILED,
  CANCELLED,
  /** Ended by the server at its deadline, with the error {@code DeadlineExceeded}. */
  TIMED_OUT;

  @JsonValue
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static RunStatus of(String wire) {
    return valueOf(wire.toUpperCase(Locale.ROOT));
  }

  public boolean isTerminal() {
    return this != RUNNING;
  }
}
