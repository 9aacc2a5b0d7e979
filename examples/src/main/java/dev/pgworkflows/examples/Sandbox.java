package dev.pgworkflows.examples;

import dev.pgworkflows.testkit.WorkflowTestKit;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;

/** Where the examples run: the server at WORKFLOWS_URL, or an in-process one. */
final class Sandbox implements AutoCloseable {
  private final String url;
  private final WorkflowTestKit kit;

  private Sandbox(String url, WorkflowTestKit kit) {
    this.url = url;
    this.kit = kit;
  }

  static Sandbox open() {
    String url = System.getenv("WORKFLOWS_URL");
    if (url != null && !url.isBlank()) {
      return new Sandbox(url, null);
    }
    WorkflowTestKit kit = WorkflowTestKit.start();
    return new Sandbox(kit.url(), kit);
  }

  /** A client: the in-process server's application token, else WORKFLOWS_TOKEN. */
  WorkflowClient client() {
    if (kit != null) {
      return kit.client();
    }
    return WorkflowClient.connect(url, System.getenv("WORKFLOWS_TOKEN"));
  }

  /** A worker's options: the in-process server's worker token, else WORKFLOWS_TOKEN. */
  WorkerOptions workerOptions() {
    if (kit != null) {
      return kit.workerOptions();
    }
    String token = System.getenv("WORKFLOWS_TOKEN");
    return WorkerOptions.url(url)
        .pollWait(Duration.ofSeconds(1))
        .token(token == null ? "local" : token);
  }

  static void awaitWaiting(WorkflowClient client, String workflow, long run)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (client.runs().get(workflow, run).waitingFor() == null) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("run " + run + " never started waiting");
      }
      Thread.sleep(20);
    }
  }

  @Override
  public void close() {
    if (kit != null) {
      kit.close();
    }
  }
}
