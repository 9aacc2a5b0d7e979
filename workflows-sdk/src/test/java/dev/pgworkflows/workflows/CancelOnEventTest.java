package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A definition's cancel-on rules, set by its worker as it starts: a signal they name cancels the
 * run it is sent to, a message published on a topic they fit cancels the runs whose input it
 * concerns, and a child started to be cancelled with its parent goes with it; over HTTP and through
 * the JDBC engine alike. A rule the server refuses fails the worker's start, naming it.
 */
class CancelOnEventTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Order(int orderId, String customer) {}

  private static Workflow<Order, String> parcel =
      Workflow.define("cancel-on-parcel", Order.class, String.class)
          .run(
              (ctx, o) ->
                  ctx.step()
                          .waitForEvent("shipped", Map.class, Match.any(), Duration.ofDays(1))
                          .isPresent()
                      ? "shipped"
                      : "lost");

  private static Workflow<Order, String> order(String name) {
    return Workflow.define(name, Order.class, String.class)
        .cancelOn(CancelOn.signal("abort").match(Match.of("reason", "fraud")))
        .cancelOn(CancelOn.topic("orders.*.cancelled").sameInput("orderId"))
        .run(
            (ctx, o) -> {
              ctx.step().startChild("parcel", parcel, o);
              ctx.step().waitForEvent("paid", Map.class, Match.any(), Duration.ofDays(1));
              return "paid";
            });
  }

  private static void awaitStatus(String workflow, long run, RunStatus status) throws Exception {
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (server.client().runs().get(workflow, run).status() != status) {
      assertThat(System.nanoTime())
          .as("run %d of %s becomes %s", run, workflow, status)
          .isLessThan(until);
      Thread.sleep(20);
    }
  }

  private static long childOf(String workflow, long run) throws Exception {
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (server.client().runs().get(workflow, run).children().isEmpty()) {
      assertThat(System.nanoTime()).isLessThan(until);
      Thread.sleep(20);
    }
    return server.client().runs().get(workflow, run).children().get(0).runId();
  }

  @Test
  void aSignalTheRulesNameCancelsTheRunAndItsChild() throws Exception {
    Workflow<Order, String> wf = order("cancel-on-signal");
    server.serve(wf);
    server.serve(parcel);
    WorkflowClient client = server.client();
    long run = client.start(wf, new Order(1, "acme")).runId();
    long child = childOf("cancel-on-signal", run);

    assertThat(client.signal("cancel-on-signal", run, "abort", Map.of("reason", "late")).buffered())
        .as("a payload the rule's match does not fit")
        .isTrue();
    assertThat(client.runs().get("cancel-on-signal", run).status()).isEqualTo(RunStatus.RUNNING);

    assertThat(
            client.signal("cancel-on-signal", run, "abort", Map.of("reason", "fraud")).cancelled())
        .isTrue();
    assertThat(client.runs().get("cancel-on-signal", run).status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(client.runs().get("cancel-on-parcel", child).status())
        .isEqualTo(RunStatus.CANCELLED);
  }

  @Test
  void aPublishedMessageCancelsOnlyTheRunsOfItsOrder() throws Exception {
    Workflow<Order, String> wf = order("cancel-on-topic");
    server.serve(wf);
    server.serve(parcel);
    WorkflowClient client = server.client();
    long seven = client.start(wf, new Order(7, "acme")).runId();
    long eight = client.start(wf, new Order(8, "acme")).runId();
    childOf("cancel-on-topic", seven);

    var published =
        server
            .api()
            .post("/v1/topics/orders.eu.cancelled/messages", Map.of("body", Map.of("orderId", 7)));
    assertThat(published.status()).isEqualTo(201);
    assertThat(published.json().get("cancelled").toString())
        .isEqualTo("[{\"workflow\":\"cancel-on-topic\",\"runId\":" + seven + "}]");
    assertThat(client.runs().get("cancel-on-topic", seven).status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(client.runs().get("cancel-on-topic", eight).status()).isEqualTo(RunStatus.RUNNING);

    client.signal("cancel-on-topic", eight, "paid", Map.of());
    assertThat(
            client
                .runs()
                .awaitResult("cancel-on-topic", eight, String.class, Duration.ofSeconds(30)))
        .isEqualTo("paid");
  }

  @Test
  void aWorkerOverJdbcSetsTheRulesAndASignalCancelsThroughTheEngine() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        PgWorkflows pgw = PgWorkflows.start(ds)) {
      Workflow<Order, String> wf = order("cancel-on-jdbc");
      pgw.serve(wf);
      pgw.serve(parcel);
      long run = pgw.client().start(wf, new Order(3, "acme")).runId();
      long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (pgw.client().runs().get("cancel-on-jdbc", run).waitingFor() == null) {
        assertThat(System.nanoTime()).isLessThan(until);
        Thread.sleep(20);
      }
      assertThat(
              pgw.client()
                  .signal("cancel-on-jdbc", run, "abort", Map.of("reason", "fraud"))
                  .cancelled())
          .isTrue();
      assertThat(pgw.client().runs().get("cancel-on-jdbc", run).status())
          .isEqualTo(RunStatus.CANCELLED);
    }
  }

  @Test
  void theWorkerSetsItsDefinitionsRulesOnTheServer() {
    server.serve(order("cancel-on-read"));
    assertThat(server.api().get("/v1/workflows/cancel-on-read/cancel-on").body())
        .isEqualTo(
            "{\"workflow\":\"cancel-on-read\",\"rules\":[{\"signal\":\"abort\",\"match\":{\"reason\":\"fraud\"}},"
                + "{\"topic\":\"orders.*.cancelled\",\"inputFields\":[\"orderId\"]}]}");
  }

  @Test
  void aRuleTheServerRefusesFailsTheWorkersStartNamingIt() {
    Workflow<Order, String> bad =
        Workflow.define("cancel-on-bad", Order.class, String.class)
            .cancelOn(CancelOn.signal("ok"))
            .cancelOn(CancelOn.topic("orders..cancelled"))
            .run((ctx, o) -> "x");
    assertThatThrownBy(() -> server.serve(bad))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("rules[1].topic");
    assertThat(server.api().get("/v1/workflows/cancel-on-bad/cancel-on").body())
        .isEqualTo("{\"workflow\":\"cancel-on-bad\",\"rules\":[]}");
  }

  @Test
  void aBadRuleIsRefusedInCodeBeforeAnyIo() {
    assertThatThrownBy(() -> CancelOn.signal("__child.1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("signal must be");
    assertThatThrownBy(() -> CancelOn.topic("orders.#").sameInput())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 to 10");
    assertThat(CancelOn.topic("orders.#").sameInput("orderId").toString())
        .isEqualTo("topic orders.# on the same [orderId]");
    assertThat(List.of(CancelOn.signal("a"))).hasSize(1);
  }
}
