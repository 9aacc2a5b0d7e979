package dev.pgworkflows.workflows.testing;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The server tests' {@link ServerOnFreshDatabase}, with an SDK client of it and workers that stop
 * after each test (the server's test code cannot know the SDK):
 *
 * <pre>{@code
 * @RegisterExtension static final LiveServer server = new LiveServer();
 * ... server.client().start("wf", input) ...
 * }</pre>
 */
public final class LiveServer implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
  private final ServerOnFreshDatabase server;
  private final List<Worker> workers = new CopyOnWriteArrayList<>();
  private WorkflowClient client;

  public LiveServer() {
    this(ServerOnFreshDatabase.start());
  }

  private LiveServer(ServerOnFreshDatabase server) {
    this.server = server;
  }

  /** A server with one environment variable set, e.g. {@code WORKFLOWS_MAX_RETENTION_DAYS}. */
  public static LiveServer with(String name, String value) {
    return new LiveServer(ServerOnFreshDatabase.with(name, value));
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    server.beforeAll(context);
    client = WorkflowClient.connect(server.url());
  }

  @Override
  public void afterEach(ExtensionContext context) {
    workers.forEach(Worker::close);
    workers.clear();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    client = null;
    server.afterAll(context);
  }

  public String url() {
    return server.url();
  }

  /** A client of the server. */
  public WorkflowClient client() {
    if (client == null) {
      throw new IllegalStateException("the server runs only while the test class does");
    }
    return client;
  }

  /** A worker of {@code workflow} on this server, polling briefly; it stops after the test. */
  public Worker serve(Workflow<?, ?> workflow) {
    return serve(workflow, WorkerOptions.url(url()).pollWait(Duration.ofSeconds(2)));
  }

  /** A worker of {@code workflow} with these options; it stops after the test. */
  public Worker serve(Workflow<?, ?> workflow, WorkerOptions options) {
    Worker worker = workflow.serve(options);
    workers.add(worker);
    return worker;
  }

  /** The server's REST API, raw. */
  public Api api() {
    return server.api();
  }

  /** The server's database. */
  public TestDatabase database() {
    return server.database();
  }
}
