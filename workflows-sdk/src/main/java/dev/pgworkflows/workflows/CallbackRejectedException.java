package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A callback's URL was posted to with {@code /reject}: thrown into the workflow body by {@link
 * Callback#await}, with the body that was sent (JSON null when none). On replay it is thrown again.
 */
public final class CallbackRejectedException extends WorkflowException {
  private static final long serialVersionUID = 1L;

  private final String callback;
  private final transient JsonNode body;

  public CallbackRejectedException(String callback, JsonNode body) {
    super("callback " + callback + " was rejected: " + body);
    this.callback = callback;
    this.body = body;
  }

  /** The callback's name. */
  public String callback() {
    return callback;
  }

  /** The body the rejection was sent with. */
  public JsonNode body() {
    return body;
  }
}
