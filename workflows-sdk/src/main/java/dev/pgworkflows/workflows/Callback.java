package dev.pgworkflows.workflows;

import java.time.Instant;
import java.util.Optional;

/**
 * A wait any HTTP client can complete ({@link StepContext#callback}): hand its {@link #url()} (or
 * its {@link #token()}) to a third party, a payment provider or a person by mail, whose plain
 * {@code POST} of JSON to it, with no API token, completes the wait with that body; a {@code POST}
 * to the URL with {@code /reject} added fails it. The token is the only credential: it works once,
 * and not after {@link #expiresAt()}.
 *
 * <pre>{@code
 * Callback approval = ctx.step().callback("approval", Duration.ofDays(3));
 * ctx.step().run("ask", () -> mail.send(manager, "Approve? " + approval.url().orElseThrow()));
 * Optional<Decision> d = approval.await(Decision.class);   // empty once the three days are over
 * }</pre>
 */
public interface Callback {
  /** The callback's name, the step that minted it. */
  String name();

  /**
   * The URL that takes the POST: the server's address as the worker reached it, then {@code
   * /v1/callbacks/<token>}. Empty for a worker over JDBC, which has no server to receive it: give
   * the token to whatever will post it to a server of the same database.
   */
  Optional<String> url();

  /** The token: the run, the callback's name and an HMAC of both under the database's key. */
  String token();

  /** When the callback stops working: a POST after it is answered 410. */
  Instant expiresAt();

  /**
   * Waits (durably: the worker is free meanwhile) for the POST: its body, or empty once the
   * callback's time is over. A rejection throws {@link CallbackRejectedException} with the body
   * sent. Call it from the workflow body, once, after the steps that hand the URL on.
   */
  <T> Optional<T> await(Class<T> type);

  /** As {@link #await(Class)}, for a generic type. */
  <T> Optional<T> await(TypeRef<T> type);
}
