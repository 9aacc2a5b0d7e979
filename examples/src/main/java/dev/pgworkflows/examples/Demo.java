package dev.pgworkflows.examples;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.WorkflowClient;
import java.time.Duration;
import java.util.List;

/**
 * The README's first command: starts the server (embedded PostgreSQL under ./.workflows unless
 * DATABASE_URL is set), runs the onboarding workflow end to end, prints the run and its journal,
 * and keeps serving. {@code --once} exits after the demo run.
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) throws Exception {
    boolean once = List.of(args).contains("--once");
    ServerConfig config = ServerConfig.fromEnvironment();
    QueueServer server = QueueServer.start(config);
    String url = "http://localhost:" + server.port();
    // Without tokens (the default, on loopback) any bearer token passes; with tokens configured
    // the demo needs one that may start, read and work: WORKFLOWS_TOKEN.
    String token = config.apiTokens().isEmpty() ? "dev" : System.getenv("WORKFLOWS_TOKEN");
    if (token == null || token.isBlank()) {
      server.close();
      throw new IllegalStateException(
          "WORKFLOWS_API_TOKENS is set: give the demo a token with scopes read, start and worker"
              + " in WORKFLOWS_TOKEN");
    }
    var onboard = OnboardUser.workflow(Duration.ofSeconds(1));
    Worker worker =
        onboard.serve(WorkerOptions.url(url).token(token).pollWait(Duration.ofSeconds(1)));
    WorkflowClient client = WorkflowClient.connect(url, token);
    ObjectMapper json =
        new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(SerializationFeature.INDENT_OUTPUT);

    System.out.println();
    System.out.println("== demo: onboard-user ==");
    long run =
        client
            .start(
                onboard,
                new OnboardUser.Signup("ada@example.com"),
                StartOptions.builder().idempotencyKey("demo-" + System.currentTimeMillis()).build())
            .runId();
    System.out.println(
        "started run "
            + run
            + "; it creates the user, sleeps 1 s, sends a welcome,"
            + " then waits for \"verify\"");
    Sandbox.awaitWaiting(client, "onboard-user", run);
    long userId = client.runs().steps("onboard-user", run).get(0).output().get("id").asLong();
    var sent = client.signal("onboard-user", run, "verify", new OnboardUser.Verified(userId));
    System.out.println("signalled \"verify\" for user " + userId + ": " + sent.outcome());
    client.runs().awaitResult("onboard-user", run, Long.class, Duration.ofSeconds(60));

    RunInfo info = client.runs().get("onboard-user", run);
    List<StepInfo> steps = client.runs().steps("onboard-user", run);
    System.out.println();
    System.out.println("run " + run + " is " + info.status().wire() + ":");
    System.out.println(json.writeValueAsString(info));
    System.out.println("journal:");
    for (StepInfo s : steps) {
      System.out.printf(
          "  %-14s %-5s %s%s%n",
          s.name(),
          s.kind(),
          s.output() == null ? "null" : s.output(),
          s.timedOut() ? " (timed out)" : "");
    }
    System.out.println();
    System.out.println("look around:");
    System.out.println(
        "  open " + url + "/ui#/workflows/onboard-user/runs/" + run + " (the dashboard)");
    System.out.println(
        "  curl -H 'Authorization: Bearer "
            + token
            + "' "
            + url
            + "/v1/workflows/onboard-user/runs/"
            + run
            + "/steps");
    System.out.println("  curl -H 'Authorization: Bearer " + token + "' " + url + "/v1/workflows");
    System.out.println("  curl " + url + "/metrics");
    System.out.println("  curl " + url + "/openapi.yaml");
    if (once) {
      worker.close();
      server.close();
      System.exit(0);
    }
    System.out.println("the server keeps running on " + url + "; Ctrl-C stops it");
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  worker.close();
                  server.close();
                }));
  }
}
