package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Callback URLs from a real worker of a real server: the body hands the URL to a step, a plain POST
 * without an API token completes the run's wait with its body (once: a second is 410), a POST to
 * {@code /reject} throws into the body, a callback whose time passes awaits nothing, and a worker
 * over JDBC gets a token (no URL) that a server of the same database takes.
 */
class CallbackUrlsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  record Decision(boolean approved, String by) {}

  /** Hands each callback's URL (or token) to the test, as a mail to a manager would. */
  private static Workflow<String, String> approval(
      String name, BlockingQueue<Callback> outbox, Duration timeout) {
    return Workflow.define(name, String.class, String.class)
        .run(
            (ctx, expense) -> {
              Callback cb = ctx.step().callback("approval", timeout);
              ctx.step().run("ask", () -> outbox.add(cb));
              try {
                return cb.await(Decision.class)
                    .map(d -> (d.approved() ? "approved by " : "declined by ") + d.by())
                    .orElse("no answer");
              } catch (CallbackRejectedException e) {
                return "rejected: " + e.body().path("reason").asText();
              }
            });
  }

  private static HttpResponse<String> post(String url, String body) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A run started on a served workflow, with the callback its body handed on and the outbox. */
  private record Asked(long run, Callback callback, BlockingQueue<Callback> outbox) {}

  private static Asked ask(String workflow, Duration timeout, String expense) throws Exception {
    BlockingQueue<Callback> outbox = new LinkedBlockingQueue<>();
    Workflow<String, String> wf = approval(workflow, outbox, timeout);
    server.serve(wf);
    long run = server.client().start(wf, expense).runId();
    Callback cb = outbox.poll(30, TimeUnit.SECONDS);
    assertThat(cb).as("the callback %s's body handed on", workflow).isNotNull();
    return new Asked(run, cb, outbox);
  }

  @Test
  void aPlainPostCompletesTheWaitOnceAndTheRunGoesOn() throws Exception {
    Asked asked = ask("cb-approve", Duration.ofHours(1), "taxi");
    long run = asked.run();
    Callback cb = asked.callback();
    assertThat(cb.url()).hasValue(server.url() + "/v1/callbacks/" + cb.token());

    HttpResponse<String> answered = post(cb.url().get(), "{\"approved\": true, \"by\": \"ada\"}");
    assertThat(answered.statusCode()).as(answered.body()).isEqualTo(200);
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("cb-approve", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("approved by ada");

    HttpResponse<String> again = post(cb.url().get(), "{\"approved\": false, \"by\": \"eve\"}");
    assertThat(again.statusCode()).isEqualTo(410);
    assertThat(again.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/problem+json");
    assertThat(server.client().runs().steps("cb-approve", run))
        .extracting(StepInfo::name)
        .containsExactly("approval", "ask", "approval.result");
    assertThat(asked.outbox()).as("the URL was handed on once").isEmpty();
  }

  @Test
  void aRejectionThrowsIntoTheBody() throws Exception {
    Asked asked = ask("cb-reject", Duration.ofHours(1), "yacht");
    long run = asked.run();
    Callback cb = asked.callback();
    assertThat(post(cb.url().get() + "/reject", "{\"reason\": \"too dear\"}").statusCode())
        .isEqualTo(200);
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("cb-reject", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("rejected: too dear");
  }

  @Test
  void aCallbackWhoseTimePassesAwaitsNothingAndItsUrlIsGone() throws Exception {
    Asked asked = ask("cb-late", Duration.ofSeconds(1), "lunch");
    long run = asked.run();
    Callback cb = asked.callback();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("cb-late", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("no answer");
    assertThat(post(cb.url().get(), "{\"approved\": true, \"by\": \"ada\"}").statusCode())
        .isEqualTo(410);
  }

  @Test
  void aForgedTokenIsNotFoundAndATooLargeBodyIsRefused() throws Exception {
    HttpResponse<String> forged =
        post(server.url() + "/v1/callbacks/1.1." + "0".repeat(64) + ".approval", "{}");
    assertThat(forged.statusCode()).isEqualTo(404);
    assertThat(forged.body()).contains("no such callback").doesNotContain("Exception");
    HttpResponse<String> big =
        post(
            server.url() + "/v1/callbacks/1.1." + "0".repeat(64) + ".big",
            "\"" + "x".repeat(70_000) + "\"");
    assertThat(big.statusCode()).isEqualTo(413);
  }

  @Test
  void aWorkerOverJdbcGetsATokenThatAServerOfTheSameDatabaseTakes() throws Exception {
    BlockingQueue<Callback> outbox = new LinkedBlockingQueue<>();
    Workflow<String, String> wf = approval("cb-jdbc", outbox, Duration.ofHours(1));
    try (HikariDataSource ds = WithoutAServerTest.pool(server.database());
        PgWorkflows pgw = PgWorkflows.start(ds)) {
      pgw.serve(wf);
      long run = pgw.client().start(wf, "train").runId();
      Callback cb = outbox.poll(30, TimeUnit.SECONDS);
      assertThat(cb.url()).isEmpty();
      assertThat(
              post(
                      server.url() + "/v1/callbacks/" + cb.token(),
                      "{\"approved\": true, \"by\": \"bo\"}")
                  .statusCode())
          .isEqualTo(200);
      assertThat(
              pgw.client().runs().awaitResult("cb-jdbc", run, String.class, Duration.ofSeconds(30)))
          .isEqualTo("approved by bo");
    }
  }

  @Test
  void aCallbackNameTooLongFailsTheRunNamingTheLimit() {
    Workflow<String, String> wf =
        Workflow.define("cb-bad", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().callback("x".repeat(118), Duration.ofHours(1));
                  return in;
                });
    server.serve(wf);
    long run = server.client().start(wf, "x").runId();
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("cb-bad", run, String.class, Duration.ofSeconds(30)))
        .isInstanceOf(WorkflowFailedException.class)
        .hasMessageContaining("at most 117 characters");
    assertThat(server.api().get("/v1/workflows/cb-bad/runs/" + run + "/callbacks").body())
        .isEqualTo("{\"callbacks\":[]}");
  }
}
