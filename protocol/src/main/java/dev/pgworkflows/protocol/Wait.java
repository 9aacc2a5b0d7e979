package dev.pgworkflows.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * What a waiting run waits for: one event whose payload contains {@code match}, or, with {@code
 * arms}, several events of which the first ({@code all} false) or every one ({@code all} true) ends
 * the wait. A child run's end is the event {@code __child.<runId>}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Wait(String step, String event, ObjectNode match, List<Arm> arms, Boolean all) {

  /** A wait for one event. */
  public Wait(String step, String event, ObjectNode match) {
    this(step, event, match, null, null);
  }

  /** One event a wait on several arms takes, and the document its payload must contain. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Arm(String event, ObjectNode match) {}
}
