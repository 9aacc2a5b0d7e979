package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code pgw topics} against a live server: subscribing, publishing, unsubscribing. */
class TopicCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aPublishReachesTheSubscribedQueueAndWorkflowUntilUnsubscribed() {
    pgw.ok("queues", "create", "events");
    Cli.Result subscribed = pgw.ok("topics", "subscribe", "orders.*.created", "--queue", "events");
    assertThat(subscribed.out()).containsPattern("(?m)^pattern +orders\\.\\*\\.created$");
    JsonNode toWorkflow = pgw.json("topics", "subscribe", "orders.#", "--workflow", "ship");
    long queueSub =
        pgw.json("topics", "subscriptions", "orders.*.created")
            .get("subscriptions")
            .get(0)
            .get("id")
            .asLong();

    Cli.Result all = pgw.ok("topics", "subscriptions");
    assertThat(all.lines().get(0)).startsWith("ID").contains("PATTERN", "TARGET");
    assertThat(all.out()).contains("orders.*.created", "events", "orders.#", "ship");

    Cli.Result published = pgw.ok("topics", "publish", "orders.eu.created", "{\"orderId\":8}");
    assertThat(published.lines()).hasSize(3);
    assertThat(published.out()).contains("queue", "events", "workflow", "ship");
    assertThat(pgw.json("queues", "get", "events").at("/metrics/depth").asLong()).isEqualTo(1);
    assertThat(pgw.json("runs", "list", "ship").get("runs")).hasSize(1);

    assertThat(pgw.ok("topics", "unsubscribe", "orders.*.created", String.valueOf(queueSub)).out())
        .isEqualTo("subscription " + queueSub + ": removed\n");
    JsonNode after =
        pgw.json(
            "topics",
            "publish",
            "orders.eu.created",
            "{\"orderId\":9}",
            "--header",
            "idempotencyKey=o-9");
    assertThat(after.get("deliveries")).hasSize(1);
    assertThat(after.get("deliveries").get(0).get("subscriptionId").asLong())
        .isEqualTo(toWorkflow.get("id").asLong());
    assertThat(pgw.ok("topics", "publish", "nobody.listens", "1").out())
        .isEqualTo("no subscription matched\n");
  }

  @Test
  void aBatchingSubscriptionStartsOneRunPerFullBatchAndABadBatchIsRefused() {
    Cli.Result subscribed =
        pgw.ok(
            "topics",
            "subscribe",
            "clicks.#",
            "--workflow",
            "tally",
            "--batch-size",
            "2",
            "--batch-timeout-ms",
            "600000");
    assertThat(subscribed.out()).contains("maxSize").contains("600000");
    JsonNode first = pgw.json("topics", "publish", "clicks.home", "{\"n\":1}");
    assertThat(first.at("/deliveries/0/type").asText()).isEqualTo("batched");
    assertThat(pgw.json("runs", "list", "tally").get("runs")).isEmpty();
    JsonNode second = pgw.json("topics", "publish", "clicks.cart", "{\"n\":2}");
    assertThat(second.at("/deliveries/0/type").asText()).isEqualTo("workflow");
    JsonNode run = pgw.json("runs", "get", "tally", second.at("/deliveries/0/id").asText());
    assertThat(run.get("input").toString()).isEqualTo("[{\"n\":1},{\"n\":2}]");

    Cli.Result bad =
        pgw.run(
            "topics",
            "subscribe",
            "clicks.#",
            "--workflow",
            "other",
            "--batch-size",
            "100000",
            "--batch-timeout-ms",
            "1000");
    assertThat(bad.exit()).isNotZero();
    assertThat(bad.err()).contains("batch.maxSize");
    assertThat(pgw.json("topics", "subscriptions", "clicks.#").get("subscriptions")).hasSize(1);
  }

  @Test
  void aWebhookSubscriptionIsSignedWithItsSecret() {
    JsonNode hook =
        pgw.json(
            "topics",
            "subscribe",
            "invoices.#",
            "--webhook",
            "https://hooks.example.com/invoices",
            "--secret",
            "a-long-shared-secret");
    assertThat(hook.get("type").asText()).isEqualTo("https");
    assertThat(hook.get("signed").asBoolean()).isTrue();
    assertThat(pgw.ok("topics", "subscriptions", "invoices.#").out())
        .containsPattern(
            "(?m)^\\d+ +invoices\\.# +https +https://hooks\\.example\\.com/invoices +yes ");

    Cli.Result refused =
        pgw.run("topics", "subscribe", "invoices.#", "--webhook", "http://127.0.0.1:9/hook");
    assertThat(refused.exit()).isEqualTo(ExitCodes.SERVER_ERROR);
    assertThat(refused.err()).startsWith("pgw: 400 Bad Request: ");
    assertThat(pgw.json("topics", "subscriptions", "invoices.#").get("subscriptions")).hasSize(1);
  }
}
