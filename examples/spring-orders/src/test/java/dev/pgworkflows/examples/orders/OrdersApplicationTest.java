package dev.pgworkflows.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.testkit.WorkflowTestKit;
import dev.pgworkflows.testkit.WorkflowTestKit.Role;
import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application over real HTTP, against a real pgworkflows server (the test kit's) whose
 * PostgreSQL also holds the application's table: one context for every test.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
// Closed after the class, workers first and the server last, rather than at the JVM's exit.
@DirtiesContext
class OrdersApplicationTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static WorkflowTestKit kit;

  @DynamicPropertySource
  static void server(DynamicPropertyRegistry properties) {
    kit = WorkflowTestKit.start();
    WorkflowTestKit.Database db = kit.database();
    properties.add("pgworkflows.url", kit::url);
    properties.add("pgworkflows.token", () -> kit.token(Role.CLIENT));
    properties.add("pgworkflows.worker.token", () -> kit.token(Role.WORKER));
    properties.add("pgworkflows.worker.poll-wait", () -> "1s");
    properties.add("spring.datasource.url", db::jdbcUrl);
    properties.add("spring.datasource.username", db::user);
    properties.add("spring.datasource.password", db::password);
  }

  /** The server stops with the context, after the workers that use it. */
  @TestConfiguration(proxyBeanMethods = false)
  static class Server {
    @Bean(destroyMethod = "close")
    WorkflowTestKit workflowTestKit() {
      return kit;
    }
  }

  @LocalServerPort int port;
  @Autowired JdbcClient db;
  @Autowired WorkflowClient client;

  @Test
  void aCommittedOrderHasItsRowAndItsRunCompletes() throws Exception {
    HttpResponse<String> placed =
        post("{\"orderId\": \"o-1\", \"item\": \"tea\", \"quantity\": 3}");
    assertThat(placed.statusCode()).isEqualTo(201);
    long runId = runIdOf("o-1");
    assertThat(placed.body()).contains("\"runId\":" + runId);
    assertThat(
            client
                .runs()
                .awaitResult(OrderWorkflow.NAME, runId, String.class, Duration.ofSeconds(30)))
        .isEqualTo("shipped 3 x tea");
    Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> "shipped".equals(status("o-1")));
    HttpResponse<String> shown = get("/orders/o-1");
    assertThat(shown.statusCode()).isEqualTo(200);
    assertThat(shown.body()).contains("\"status\":\"shipped\"");
  }

  @Test
  void anOrderTheTableRefusesAfterTheStartLeavesNeitherRowNorRun() throws Exception {
    HttpResponse<String> refused =
        post("{\"orderId\": \"o-2\", \"item\": \"tea\", \"quantity\": 0}");
    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(refused.body()).contains("quantity must be 1 to 100");
    assertThat(
            db.sql("SELECT count(*) FROM shop_order WHERE order_id = 'o-2'")
                .query(Long.class)
                .single())
        .isZero();
    assertThat(runsOf("o-2")).isEmpty();
  }

  @Test
  void aTakenOrderIdRollsBackAndKeepsTheFirstOrderAndItsOneRun() throws Exception {
    assertThat(post("{\"orderId\": \"o-3\", \"item\": \"tea\", \"quantity\": 1}").statusCode())
        .isEqualTo(201);
    HttpResponse<String> again =
        post("{\"orderId\": \"o-3\", \"item\": \"coffee\", \"quantity\": 2}");
    assertThat(again.statusCode()).isEqualTo(409);
    assertThat(
            db.sql("SELECT item FROM shop_order WHERE order_id = 'o-3'").query(String.class).list())
        .containsExactly("tea");
    assertThat(runsOf("o-3")).hasSize(1);
  }

  /**
   * A row the application wrote without a run (as an import might): placing that order creates its
   * run inside the transaction (no run has its key yet), and the refused insert rolls it back.
   */
  @Test
  void aTakenOrderIdRollsBackTheRunItsStartCreated() throws Exception {
    db.sql(
            "INSERT INTO shop_order (order_id, item, quantity, status, run_id)"
                + " VALUES ('o-4', 'tea', 1, 'imported', 0)")
        .update();
    HttpResponse<String> placed =
        post("{\"orderId\": \"o-4\", \"item\": \"coffee\", \"quantity\": 2}");
    assertThat(placed.statusCode()).isEqualTo(409);
    assertThat(runsOf("o-4")).isEmpty();
    assertThat(
            db.sql(
                    "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = ?"
                        + " AND idempotency_key = 'order-o-4'")
                .param(OrderWorkflow.NAME)
                .query(Long.class)
                .single())
        .isZero();
  }

  @Test
  void healthShowsTheServerUp() throws Exception {
    HttpResponse<String> health = get("/actuator/health");
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).contains("\"pgworkflows\":{").contains("\"status\":\"UP\"");
  }

  private long runIdOf(String orderId) {
    return db.sql("SELECT run_id FROM shop_order WHERE order_id = ?")
        .param(orderId)
        .query(Long.class)
        .single();
  }

  private String status(String orderId) {
    return db.sql("SELECT status FROM shop_order WHERE order_id = ?")
        .param(orderId)
        .query(String.class)
        .single();
  }

  /** The workflow's runs whose input is the order {@code orderId}, as the server lists them. */
  private List<RunInfo> runsOf(String orderId) {
    return client.runs().list(OrderWorkflow.NAME, null, null, 100).runs().stream()
        .filter(r -> orderId.equals(r.input().path("orderId").asText()))
        .toList();
  }

  private HttpResponse<String> post(String json) throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/orders"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
