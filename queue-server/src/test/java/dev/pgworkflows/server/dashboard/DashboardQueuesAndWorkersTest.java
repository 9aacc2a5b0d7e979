package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The dashboard's queue and worker pages in a real browser over a real server. */
@Tag("browser")
class DashboardQueuesAndWorkersTest {
  /** Workers are written to the registry every sixth of their expiry: every 2 s here. */
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_WORKER_EXPIRY_MS", "12000");

  private static final Api api = server.api();
  private static Browser browser;

  @BeforeAll
  static void startBrowser() {
    browser = Browser.start(server::url);
  }

  @AfterAll
  static void stopBrowser() {
    if (browser != null) {
      browser.close();
    }
  }

  /** A queue holding one message in a group and one dead letter; answers the dead letter's id. */
  private static long queueWithADeadLetter(String queue) {
    assertThat(
            api.put(
                    "/v1/queues/" + queue,
                    Map.of("fifo", true, "visibilityTimeoutSeconds", 0, "maxReceives", 1))
                .status())
        .isEqualTo(201);
    api.post(
        "/v1/queues/" + queue + "/messages",
        Map.of("body", Map.of("orderId", 9, "sku", "tea-001"), "groupId", "customer-9"));
    assertThat(api.post("/v1/queues/" + queue + "/messages/receive", null).json().get("messages"))
        .hasSize(1);
    assertThat(api.post("/v1/queues/" + queue + "/messages/receive", null).json().get("messages"))
        .isEmpty();
    api.post(
        "/v1/queues/" + queue + "/messages",
        Map.of("body", Map.of("orderId", 10, "sku", "mug-002"), "groupId", "customer-10"));
    return api.get("/v1/queues/" + queue + "/dead-letters")
        .json()
        .at("/deadLetters/0/deadId")
        .asLong();
  }

  @Test
  void reDrivingADeadLetterFromItsQueuePagePutsTheMessageBackInTheQueue() {
    long deadId = queueWithADeadLetter("orders");

    browser.open("/queues");
    assertThat(browser.text("tr[data-queue=orders] td.dead")).isEqualTo("1");
    assertThat(browser.text("tr[data-queue=orders] td.depth")).isEqualTo("1");
    browser.screenshot("queues");
    browser.click("tr[data-queue=orders] a.queue-link");

    String row = ".dead-letters tr[data-id='" + deadId + "']";
    assertThat(browser.text(row)).contains("tea-001").contains("customer-9");
    browser.screenshot("queue");
    browser.click(row + " .redrive");
    browser.confirm("Re-drive dead letter " + deadId);

    assertThat(browser.awaitText("#notice", "back in orders")).startsWith("1 message");
    assertThat(browser.awaitText(".dead-letters", "No dead letter.")).isNotEmpty();
    assertThat(browser.awaitText(".queue-facts .depth", "2")).contains("2");
    assertThat(api.get("/v1/queues/orders/dead-letters").json().get("deadLetters")).isEmpty();
    var back = api.post("/v1/queues/orders/messages/receive", Map.of("max", 10)).json();
    assertThat(back.get("messages").findValuesAsText("groupId")).contains("customer-9");
  }

  @Test
  void anErrorFromTheApiShowsItsProblemTitleAndDetail() {
    api.put("/v1/queues/plain", Map.of());
    browser.open("/queues/plain");
    browser.type(".group-form input[name=group]", "g-1");
    browser.click(".group-form .park-group");
    browser.confirm("Park the head message of group g-1");
    assertThat(browser.awaitText("#notice.error .problem-title", "Not Found"))
        .isEqualTo("Not Found");
    assertThat(browser.text("#notice.error .problem-detail")).contains("g-1");
  }

  @Test
  void theWorkersPageListsTheWorkersThatPolled() {
    api.send(
        "POST",
        "/v1/workflows/pick-list/tasks/poll",
        Map.of("versions", List.of(1, 2), "waitSeconds", 0),
        Map.of("X-Worker-Id", "picker-1", "X-Worker-Labels", "region=eu,gpu=true"));

    browser.open("/workers");
    assertThat(browser.text("tr[data-worker=picker-1]")).contains("pick-list").contains("1, 2");
    assertThat(browser.text("tr[data-worker=picker-1] td.labels")).isEqualTo("gpu=true region=eu");
    browser.screenshot("workers");
  }
}
