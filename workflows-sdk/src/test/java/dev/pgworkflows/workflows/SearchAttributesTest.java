package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Search attributes through a real server and worker, and over JDBC: set at start and from the body
 * (once, though the body replays), found by a query; bad attributes and queries throw naming the
 * field and change nothing.
 */
class SearchAttributesTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Order(String id, int amount) {}

  private static final Workflow<Order, String> ORDER =
      Workflow.define("order", Order.class, String.class)
          .run(
              (ctx, in) -> {
                ctx.step().run("pack", String.class, () -> "packed " + in.id());
                ctx.attributes().set("stage", "packed");
                ctx.step().sleep("wait", Duration.ofMillis(10));
                ctx.attributes()
                    .set(
                        Map.of(
                            "stage",
                            "shipped",
                            "shippedAt",
                            Instant.parse("2026-12-05T10:00:00Z")));
                ctx.step().run("ship", String.class, () -> "shipped " + in.id());
                return in.id();
              });

  @BeforeAll
  static void define() {
    Runs runs = server.client().runs();
    assertThat(runs.defineAttribute("customer", AttributeType.TEXT)).isTrue();
    assertThat(runs.defineAttribute("amount", AttributeType.NUMBER)).isTrue();
    assertThat(runs.defineAttribute("stage", AttributeType.TEXT)).isTrue();
    assertThat(runs.defineAttribute("shippedAt", AttributeType.TIME)).isTrue();
    assertThat(runs.defineAttribute("amount", AttributeType.NUMBER)).isFalse();
  }

  private static Started start(WorkflowClient client, String id, String customer, int amount) {
    return client.start(
        ORDER,
        new Order(id, amount),
        StartOptions.builder().attributes(Map.of("customer", customer, "amount", amount)).build());
  }

  @Test
  void runsStartedWithAttributesAndSetByTheirBodiesAreFoundByAQuery() {
    WorkflowClient client = server.client();
    server.serve(ORDER);
    Started a = start(client, "o-1", "acme", 250);
    Started b = start(client, "o-2", "globex", 40);
    Started c = start(client, "o-3", "acme", 90);
    for (Started s : List.of(a, b, c)) {
      assertThat(
              client.runs().awaitResult("order", s.runId(), String.class, Duration.ofSeconds(30)))
          .isNotNull();
    }
    Runs runs = client.runs();
    assertThat(ids(runs.search("customer = 'acme' AND amount >= 100", null, 10)))
        .containsExactly(a.runId());
    assertThat(
            ids(
                runs.search(
                    "stage = 'shipped' AND shippedAt >= '2026-12-05' AND workflow = 'order'"
                        + " AND status = 'completed' AND customer IN ('acme', 'globex')",
                    null,
                    10)))
        .containsExactly(c.runId(), b.runId(), a.runId());
    assertThat(runs.count("customer = 'acme'")).isEqualTo(2);
    Map<String, com.fasterxml.jackson.databind.JsonNode> attributes =
        runs.attributes("order", a.runId());
    assertThat(attributes.get("stage").asText()).isEqualTo("shipped");
    assertThat(attributes.get("amount").asInt()).isEqualTo(250);
    assertThat(attributes.get("shippedAt").asText()).startsWith("2026-12-05T10:00:00");
    assertThat(runs.attributeTypes()).containsEntry("shippedAt", AttributeType.TIME);

    runs.setAttributes("order", b.runId(), Map.of("customer", "initech"));
    assertThat(ids(runs.search("customer STARTS_WITH 'ini'", null, 10))).containsExactly(b.runId());
  }

  @Test
  void theSameQueriesOverJdbcAnswerAsTheServerDoes() {
    try (HikariDataSource ds = WithoutAServerTest.pool(server.database());
        WorkflowClient jdbc = WorkflowClient.connect(ds)) {
      Started d = start(jdbc, "o-4", "umbrella", 7);
      assertThat(ids(jdbc.runs().search("customer = 'umbrella'", null, 10)))
          .containsExactly(d.runId());
      assertThat(jdbc.runs().count("customer = 'umbrella' AND amount < 10")).isEqualTo(1);
      assertThatThrownBy(() -> jdbc.runs().search("amount = 'x'", null, 10))
          .isInstanceOf(ApiException.class)
          .hasMessageContaining("query at 1: amount is a number");
    }
  }

  @Test
  void badAttributesAndQueriesThrowNamingTheFieldAndChangeNothing() {
    WorkflowClient client = server.client();
    long before = client.runs().count("workflow = 'order'");
    assertThatThrownBy(
            () ->
                client.start(
                    ORDER,
                    new Order("bad", 1),
                    StartOptions.builder().attributes(Map.of("amount", "lots")).build()))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("attributes.amount is a number attribute");
    assertThat(client.runs().count("workflow = 'order'")).isEqualTo(before);
    assertThatThrownBy(() -> client.runs().search("customer = 'acme' AND", null, 10))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("query at 22: expected a field");
    assertThatThrownBy(() -> client.runs().search("plan = 'gold'", null, 10))
        .hasMessageContaining("plan is neither a field of runs");
    assertThatThrownBy(() -> client.runs().defineAttribute("amount", AttributeType.TEXT))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("already a number attribute");
  }

  private static List<Long> ids(Runs.Page page) {
    return page.runs().stream().map(RunInfo::runId).toList();
  }
}
