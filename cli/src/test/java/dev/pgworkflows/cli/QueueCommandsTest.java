package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code pgw queues} against a live server: a queue's whole life, messages and dead letters. */
class QueueCommandsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private final Cli pgw = new Cli(server::url, TestServer.TOKEN);

  @Test
  void aCreatedQueueIsListedAndShownWithItsSettings() {
    Cli.Result created =
        pgw.ok(
            "queues",
            "create",
            "orders",
            "--fifo",
            "--visibility-timeout",
            "20",
            "--max-receives",
            "5");
    assertThat(created.lines().get(0)).startsWith("QUEUE").contains("FIFO", "DEPTH", "DEAD");
    assertThat(created.lines().get(1)).matches("orders +yes +20s +5 +0 .*");

    JsonNode again =
        pgw.json(
            "queues",
            "create",
            "orders",
            "--fifo",
            "--visibility-timeout",
            "20",
            "--max-receives",
            "5");
    assertThat(again.get("fifo").asBoolean()).isTrue();
    assertThat(pgw.json("queues", "get", "orders").get("maxReceives").asInt()).isEqualTo(5);
    assertThat(pgw.json("queues").get("queues").findValuesAsText("name")).contains("orders");
    assertThat(pgw.ok("queues", "list").out()).containsPattern("(?m)^orders ");
  }

  @Test
  void sentMessagesAreReceivedOnceAndDeletedByTheirIds() {
    pgw.ok("queues", "create", "mail");
    assertThat(pgw.ok("queues", "send", "mail", "{\"to\":\"ada\"}", "--header", "trace=t1").out())
        .matches("sent: message \\d+\\R");
    JsonNode sent = pgw.json("queues", "send", "mail", "{\"to\":\"bob\"}");
    long second = sent.get("ids").get(0).asLong();

    Cli.Result received =
        pgw.ok("queues", "receive", "mail", "--max", "1", "--match", "{\"to\":\"ada\"}");
    assertThat(received.lines().get(0)).startsWith("MESSAGE").contains("BODY");
    assertThat(received.out()).contains("{\"to\":\"ada\"}").doesNotContain("bob");
    JsonNode other = pgw.json("queues", "receive", "mail", "--max", "10", "--wait", "1");
    assertThat(other.get("messages")).hasSize(1);
    assertThat(other.get("messages").get(0).get("id").asLong()).isEqualTo(second);

    assertThat(pgw.ok("queues", "delete-message", "mail", String.valueOf(second)).out())
        .isEqualTo("message " + second + ": deleted\n");
    assertThat(pgw.json("queues", "get", "mail").at("/metrics/depth").asLong()).isEqualTo(1);
    assertThat(pgw.ok("queues", "purge", "mail").out()).isEqualTo("purged: 1\n");
    assertThat(pgw.json("queues", "get", "mail").at("/metrics/depth").asLong()).isZero();
  }

  @Test
  void deadLettersAreListedAndRedriven() {
    pgw.ok("queues", "create", "flaky", "--visibility-timeout", "0", "--max-receives", "1");
    pgw.ok("queues", "send", "flaky", "{\"n\":1}", "--group", "g");
    pgw.ok("queues", "receive", "flaky");
    // The second receive finds it over its limit and moves it to the dead letters.
    pgw.ok("queues", "receive", "flaky");

    JsonNode dead = pgw.json("queues", "dead-letters", "flaky");
    assertThat(dead.get("deadLetters")).hasSize(1);
    Cli.Result table = pgw.ok("queues", "dead-letters", "flaky", "--limit", "10");
    assertThat(table.lines().get(0)).startsWith("DEAD ID");
    assertThat(table.out()).contains("{\"n\":1}");

    String deadId = dead.get("deadLetters").get(0).get("deadId").asText();
    assertThat(pgw.ok("queues", "redrive", "flaky", deadId).out()).isEqualTo("redriven: 1\n");
    assertThat(pgw.json("queues", "dead-letters", "flaky").get("deadLetters")).isEmpty();
    assertThat(pgw.json("queues", "get", "flaky").at("/metrics/depth").asLong()).isEqualTo(1);
  }

  @Test
  void aDroppedQueueIsGone() {
    pgw.ok("queues", "create", "scratch");
    assertThat(pgw.ok("queues", "drop", "scratch").out()).isEqualTo("scratch: dropped\n");
    assertThat(pgw.run("queues", "get", "scratch").exit()).isEqualTo(ExitCodes.NOT_FOUND);
  }
}
