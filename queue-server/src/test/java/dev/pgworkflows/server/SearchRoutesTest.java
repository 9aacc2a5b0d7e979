package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Search attributes and queries over runs through the server: attributes defined by an operator,
 * set on runs, and found by the filter language; a syntax error, an unknown name, a value of the
 * wrong type or an injection attempt is a 400 naming the field, and changes nothing. Every exchange
 * checked against openapi.yaml.
 */
class SearchRoutesTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();
  private static final List<Long> runs = new ArrayList<>();

  @BeforeAll
  static void ordersWithAttributes() {
    assertThat(api.put("/v1/search-attributes/customer", Map.of("type", "text")).status())
        .isEqualTo(201);
    assertThat(api.put("/v1/search-attributes/amount", Map.of("type", "number")).status())
        .isEqualTo(201);
    assertThat(api.put("/v1/search-attributes/tags", Map.of("type", "keyword_list")).status())
        .isEqualTo(201);
    WorkerClient orders = new WorkerClient(api, "order");
    String[] customers = {"acme", "globex", "acme", "initech"};
    int[] amounts = {250, 40, 99, 1000};
    for (int i = 0; i < customers.length; i++) {
      long run = orders.start(Map.of("n", i));
      runs.add(run);
      Api.Response set =
          api.put(
              "/v1/workflows/order/runs/" + run + "/attributes",
              Map.of(
                  "attributes",
                  Map.of(
                      "customer",
                      customers[i],
                      "amount",
                      amounts[i],
                      "tags",
                      i % 2 == 0 ? List.of("eu", "rush") : List.of("us"))));
      assertThat(set.status()).as(set.body()).isEqualTo(200);
    }
  }

  private static Api.Response search(String query) {
    return api.get("/v1/runs?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
  }

  private static List<Long> ids(Api.Response r) {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    List<Long> out = new ArrayList<>();
    r.json().get("runs").forEach(run -> out.add(run.get("runId").asLong()));
    return out;
  }

  private static void assertBadQuery(Api.Response r, String detail) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json().get("field").asText()).isEqualTo("query");
    assertThat(r.json().get("detail").asText()).contains(detail);
  }

  @Test
  void aQueryFindsRunsByTheirAttributesAndTheirOwnFields() {
    assertThat(ids(search("customer = 'acme' AND amount >= 100 AND status = 'running'")))
        .containsExactly(runs.get(0));
    assertThat(ids(search("tags = 'rush' OR amount > 500")))
        .containsExactly(runs.get(3), runs.get(2), runs.get(0));
    assertThat(ids(search("NOT (customer IN ('acme', 'globex')) AND workflow = 'order'")))
        .containsExactly(runs.get(3));
    assertThat(ids(search("customer STARTS_WITH 'ini' AND startedAt > '2020-01-01'")))
        .containsExactly(runs.get(3));
    JsonNode count =
        api.get(
                "/v1/runs/count?query="
                    + URLEncoder.encode("customer = 'acme'", StandardCharsets.UTF_8))
            .json();
    assertThat(count.get("count").asLong()).isEqualTo(2);
    Api.Response page =
        api.get(
            "/v1/runs?limit=2&query=" + URLEncoder.encode("amount > 0", StandardCharsets.UTF_8));
    assertThat(ids(page)).containsExactly(runs.get(3), runs.get(2));
    assertThat(
            ids(
                api.get(
                    "/v1/runs?limit=2&cursor="
                        + page.json().get("nextCursor").asText()
                        + "&query="
                        + URLEncoder.encode("amount > 0", StandardCharsets.UTF_8))))
        .containsExactly(runs.get(1), runs.get(0));
    JsonNode attributes =
        api.get("/v1/workflows/order/runs/" + runs.get(0) + "/attributes").json().get("attributes");
    assertThat(attributes.get("customer").asText()).isEqualTo("acme");
    assertThat(attributes.get("tags").toString()).isEqualTo("[\"eu\",\"rush\"]");
    JsonNode defined = api.get("/v1/search-attributes").json().get("attributes");
    assertThat(defined.get(0).get("name").asText()).isEqualTo("amount");
    assertThat(defined.get(0).get("type").asText()).isEqualTo("number");
  }

  @Test
  void badQueriesAreRefusedWithTheReasonAndWhere() {
    assertBadQuery(search("customer = 'acme' AND"), "query at 22: expected a field");
    assertBadQuery(search("customer == 'acme'"), "query at 11: expected a value");
    assertBadQuery(search("customer = 'acme"), "query at 12: a string not closed");
    assertBadQuery(search("plan = 'gold'"), "query at 1: plan is neither a field of runs");
    assertBadQuery(search("amount = 'x'"), "query at 1: amount is a number; \"x\" is not");
    assertBadQuery(search("customer > 'a'"), "customer is a text; > does not apply");
    assertBadQuery(search("startedAt > 'yesterday'"), "startedAt is a time");
    // The value is bound, never spliced into SQL: it is only a customer no run has.
    assertThat(ids(search("customer = 'x''; DROP TABLE queue.workflow_run; --'"))).isEmpty();
    assertThat(ids(search("workflow = 'order'"))).hasSize(4);
  }

  @Test
  void badAttributesAndDefinitionsAreRefusedNamingTheFieldAndChangeNothing() {
    long run = runs.get(1);
    Api.Response wrong =
        api.put(
            "/v1/workflows/order/runs/" + run + "/attributes",
            Map.of("attributes", Map.of("amount", "lots", "customer", "changed")));
    assertThat(wrong.status()).as(wrong.body()).isEqualTo(400);
    assertThat(wrong.json().get("field").asText()).isEqualTo("attributes.amount");
    assertThat(wrong.json().get("detail").asText())
        .contains("attributes.amount is a number attribute");
    Api.Response unknown =
        api.put(
            "/v1/workflows/order/runs/" + run + "/attributes",
            Map.of("attributes", Map.of("plan", "gold")));
    assertThat(unknown.json().get("detail").asText()).contains("attributes.plan is not a search");
    assertThat(
            api.get("/v1/workflows/order/runs/" + run + "/attributes")
                .json()
                .get("attributes")
                .get("customer")
                .asText())
        .isEqualTo("globex");
    assertThat(api.get("/v1/workflows/order/runs/999999/attributes").status()).isEqualTo(404);

    assertThat(api.put("/v1/search-attributes/amount", Map.of("type", "number")).status())
        .isEqualTo(200);
    assertThat(api.put("/v1/search-attributes/amount", Map.of("type", "text")).status())
        .isEqualTo(409);
    Api.Response badType = api.put("/v1/search-attributes/size", Map.of("type", "float"));
    assertThat(badType.status()).isEqualTo(400);
    assertThat(badType.json().get("detail").asText()).contains("type must be text");
    assertThat(api.put("/v1/search-attributes/status", Map.of("type", "text")).status())
        .isEqualTo(400);
    assertThat(api.get("/v1/search-attributes").json().get("attributes")).hasSize(3);
  }
}
