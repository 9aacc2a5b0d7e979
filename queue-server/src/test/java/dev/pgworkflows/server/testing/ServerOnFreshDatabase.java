package dev.pgworkflows.server.testing;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A live server on a random port over a database of its own, for one test class: started before its
 * first test and stopped after its last.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ServerOnFreshDatabase server =
 *     ServerOnFreshDatabase.with("WORKFLOWS_FALLBACK_POLL_MS", "600000");
 * }</pre>
 */
public final class ServerOnFreshDatabase implements BeforeAllCallback, AfterAllCallback {
  private final Map<String, String> env;
  private final InstantSource clock;
  private TestServer server;

  private ServerOnFreshDatabase(Map<String, String> env, InstantSource clock) {
    this.env = Map.copyOf(env);
    this.clock = clock;
  }

  /** A server with the default test settings. */
  public static ServerOnFreshDatabase start() {
    return new ServerOnFreshDatabase(Map.of(), InstantSource.system());
  }

  /** A server with these environment variables set, e.g. {@code WORKFLOWS_FALLBACK_POLL_MS}. */
  public static ServerOnFreshDatabase with(Map<String, String> env) {
    return new ServerOnFreshDatabase(env, InstantSource.system());
  }

  /** A server with one environment variable set. */
  public static ServerOnFreshDatabase with(String name, String value) {
    return with(Map.of(name, value));
  }

  /** The same server, its environment with one more variable. */
  public ServerOnFreshDatabase and(String name, String value) {
    Map<String, String> more = new HashMap<>(env);
    more.put(name, value);
    return new ServerOnFreshDatabase(more, clock);
  }

  /** The same server reading wall-clock time from {@code clock} (a {@link SettableClock}). */
  public ServerOnFreshDatabase withClock(InstantSource clock) {
    return new ServerOnFreshDatabase(env, clock);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    server = TestServer.start(TestDatabase.fresh(), env, clock);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (server != null) {
      server.close();
      server = null;
    }
  }

  private TestServer running() {
    if (server == null) {
      throw new IllegalStateException(
          "the server runs from before the class's first test to after its last: register it"
              + " with @RegisterExtension on a static field");
    }
    return server;
  }

  /**
   * An HTTP client with a token, its exchanges checked against openapi.yaml; it may be made before
   * the server starts (in a static field's initialiser) and works once it has.
   */
  public Api api() {
    return new Api(this::url, TestServer.TOKEN);
  }

  /** A worker of workflow {@code name}, over this server's API; may be made before it starts. */
  public WorkerClient worker(String name) {
    return new WorkerClient(api(), name);
  }

  public String url() {
    return running().url();
  }

  public QueueServer server() {
    return running().server();
  }

  public TestDatabase database() {
    return running().database();
  }
}
