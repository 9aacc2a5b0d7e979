package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A send to a workflow's queue starts a run whose flow control and timing come from the message's
 * headers, through the queue API and through {@code queue.send} in the caller's own transaction; a
 * bad header is a 400 naming it and starts nothing. Every exchange is checked against openapi.yaml.
 */
class StartsThroughTheQueueTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static long sent(Api.Response r) {
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.json().get("ids").get(0).asLong();
  }

  @Test
  void theHeadersGiveTheRunItsKeyPriorityDelayAndDeadline() {
    Instant before = Instant.now();
    long run =
        sent(
            api.post(
                "/v1/queues/__wf_from-queue/messages",
                Map.of(
                    "body",
                    Map.of("order", 7),
                    "headers",
                    Map.of(
                        "idempotencyKey", "order-7",
                        "concurrencyKey", "customer-7",
                        "priority", "3",
                        "delayMs", 5_000,
                        "deadlineMs", "60000"))));
    JsonNode view = server.worker("from-queue").run(run);
    assertThat(view.get("input").get("order").asInt()).isEqualTo(7);
    assertThat(view.get("idempotencyKey").asText()).isEqualTo("order-7");
    assertThat(view.get("concurrencyKey").asText()).isEqualTo("customer-7");
    assertThat(view.get("priority").asInt()).isEqualTo(3);
    Instant due = Instant.parse(view.get("dueAt").asText());
    assertThat(due).isBetween(before.plusMillis(4_000), Instant.now().plusMillis(5_000));
    assertThat(Duration.between(due, Instant.parse(view.get("deadlineAt").asText())))
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(server.worker("from-queue").poll(List.of(1), 10, 0).json().get("tasks"))
        .as("not due before its delay")
        .isEmpty();
  }

  @Test
  void aSendInTheCallersTransactionReadsTheSameHeaders() throws Exception {
    long run;
    Instant at = Instant.now().plus(Duration.ofDays(30)).truncatedTo(ChronoUnit.SECONDS);
    try (var c = server.database().connect();
        var s =
            c.prepareStatement(
                "SELECT queue.send('__wf_from-sql', '{\"n\": 1}'::jsonb,"
                    + " jsonb_build_object('concurrencyKey', 'k', 'priority', 2, 'startAt', ?::text))")) {
      s.setString(1, at.toString());
      var rs = s.executeQuery();
      rs.next();
      run = rs.getLong(1);
    }
    assertThat(run).isPositive();
    JsonNode view = server.worker("from-sql").run(run);
    assertThat(view.get("concurrencyKey").asText()).isEqualTo("k");
    assertThat(view.get("priority").asInt()).isEqualTo(2);
    assertThat(Instant.parse(view.get("dueAt").asText())).isEqualTo(at);
  }

  @Test
  void aBadHeaderIsRefusedNamingItAndStartsNothing() {
    Object[][] cases = {
      {Map.of("priority", "ten"), "headers.priority"},
      {Map.of("priority", 10), "headers.priority"},
      {Map.of("concurrencyKey", ""), "headers.concurrencyKey"},
      {Map.of("delayMs", -1), "headers.delayMs"},
      {Map.of("delayMs", 5, "startAt", "2099-01-01T00:00:00Z"), "headers.delayMs"},
      {Map.of("deadlineMs", 0), "headers.deadlineMs"},
      {Map.of("startAt", 5), "headers.startAt"},
    };
    for (Object[] c : cases) {
      Api.Response r =
          api.post("/v1/queues/__wf_bad-headers/messages", Map.of("body", 1, "headers", c[0]));
      assertThat(r.status()).as(r.body()).isEqualTo(400);
      assertThat(r.json().get("field").asText()).as("%s", c[0]).isEqualTo(c[1]);
    }
    Api.Response batch =
        api.post(
            "/v1/queues/__wf_bad-headers/messages",
            Map.of(
                "messages",
                List.of(
                    Map.of("body", 1), Map.of("body", 2, "headers", Map.of("priority", "high")))));
    assertThat(batch.status()).as(batch.body()).isEqualTo(400);
    assertThat(batch.json().get("field").asText()).isEqualTo("messages[1].headers.priority");
    Api.Response sqlChecked =
        api.post(
            "/v1/queues/__wf_bad-headers/messages",
            Map.of("body", 1, "headers", Map.of("startAt", "tomorrow")));
    assertThat(sqlChecked.status()).as(sqlChecked.body()).isEqualTo(400);
    assertThat(sqlChecked.json().get("detail").asText()).contains("startAt");
    assertThat(api.get("/v1/workflows/bad-headers/runs").json().get("runs")).isEmpty();
  }
}
