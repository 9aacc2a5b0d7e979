package dev.pgworkflows.workflows.testing;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.WorkflowClient;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A live server on a fresh database for the tests of one class, started before the first test and
 * stopped after the last:
 *
 * <pre>{@code
 * @RegisterExtension static final LiveServer server = new LiveServer();
 * ... server.client().start("wf", input) ...
 * }</pre>
 */
public final class LiveServer implements BeforeAllCallback, AfterAllCallback {
  private TestServer server;
  private WorkflowClient client;

  @Override
  public void beforeAll(ExtensionContext context) {
    server = TestServer.start();
    client = WorkflowClient.connect(server.url());
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
      throw new IllegalStateException("the server runs only while the test class does");
    }
    return server;
  }

  public String url() {
    return running().url();
  }

  /** A client of the server. */
  public WorkflowClient client() {
    running();
    return client;
  }

  /** The server's REST API, raw. */
  public Api api() {
    return running().api();
  }

  /** The server's database. */
  public TestDatabase database() {
    return running().database();
  }
}
