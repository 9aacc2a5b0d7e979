package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.WebElement;

/**
 * The dashboard's workflow, runs and run pages in a real browser over a real server, with runs a
 * worker took through the worker protocol: what a run page shows, its actions through the page's
 * confirmation dialog, and its refresh while the run moves on.
 */
@Tag("browser")
class DashboardRunPageTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

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

  private static String runRoute(String workflow, long runId) {
    return "/workflows/" + workflow + "/runs/" + runId;
  }

  @Test
  void clickingThroughToARunShowsItsTimelineJournalSignalsAndBlockers() throws Exception {
    Checkout checkout = Checkout.waitingForPayment(server, "checkout");
    long runId = checkout.runId();
    assertThat(
            server
                .api()
                .post(checkout.path() + "/callbacks/approval", Map.of("timeoutMs", 3_600_000))
                .status())
        .isEqualTo(201);

    browser.open("/workflows");
    assertThat(browser.text("tr[data-workflow=checkout]")).contains("checkout");
    browser.screenshot("workflows");
    browser.click("tr[data-workflow=checkout] a.workflow-link");

    browser.find("tr[data-run='" + runId + "']");
    browser.screenshot("runs");
    browser.click("tr[data-run='" + runId + "'] a.run-link");

    assertThat(browser.text(".run-status")).isEqualTo("running");
    assertThat(browser.awaitCount(".run-timeline .tl-row[data-step]", 4))
        .extracting(e -> e.getAttribute("data-step"))
        .containsExactly("reserve-stock", "charge-card", "notify", "cool-off");
    assertThat(browser.text(".journal tr[data-step=charge-card]")).contains("42.5");
    assertThat(browser.text(".run-timeline .tl-row[data-step=charge-card]")).contains("attempt 2");
    assertThat(browser.text(".signals tr.buffered")).contains("gift-note").contains("buffered");
    assertThat(browser.text(".callbacks tr[data-callback=approval]"))
        .contains("approval")
        .contains("pending");
    assertThat(browser.text(".blockers li.blocker[data-kind=waiting]"))
        .contains("payment.confirmed");
    assertThat(browser.text(".run-input")).contains("\"customer\": \"ada\"");
    assertThat(browser.text(".family .child-link")).startsWith("#");
    browser.screenshot("run-waiting");

    // The payment, sent from the page: its form, then the dialog.
    browser.type(".signal-form input[name=event]", "payment.confirmed");
    browser.type(".signal-form textarea[name=payload]", "{\"orderId\": 7, \"amount\": 42.5}");
    browser.click(".signal-form .send-signal");
    browser.confirm("Send signal payment.confirmed");
    assertThat(browser.awaitText("#notice", "delivered")).contains("payment.confirmed");

    checkout.finish();
    assertThat(browser.awaitText(".run-status", "completed")).isEqualTo("completed");
    assertThat(browser.awaitCount(".run-timeline .tl-row[data-step]", 6))
        .extracting(e -> e.getAttribute("data-step"))
        .containsExactly("reserve-stock", "charge-card", "notify", "cool-off", "confirm", "ship");
    assertThat(browser.text(".run-output")).contains("PG-7-0001");
    assertThat(browser.awaitText(".signals tr[data-signal]:last-child", "delivered"))
        .contains("payment.confirmed");
    browser.click("#notice .notice-close");
    browser.screenshot("run");

    // The runs list filtered by parent has the child, whose page links back to its parent.
    browser.click(".family .children-lists a");
    assertThat(browser.awaitCount(".runs-list tr[data-run]", 1)).hasSize(1);
    assertThat(browser.find(".filters input[name=parent]").getDomProperty("value"))
        .isEqualTo(Long.toString(runId));
    browser.click(".runs-list a.run-link");
    assertThat(browser.awaitText(".parent-link", "#" + runId)).contains("checkout");
    // Nothing but this probe reached the console as an error: no script error, no policy
    // violation.
    browser.script("console.error('probe')");
    assertThat(browser.consoleErrors())
        .as("script errors and policy violations")
        .singleElement()
        .asString()
        .contains("probe");
  }

  @Test
  void aRunsUpdatesShowPendingAndAnsweredWithTheirAnswers() {
    var worker = server.worker("cart-page");
    long runId = worker.start(Map.of());
    var task = worker.pollOne();
    String run = "/v1/workflows/cart-page/runs/" + runId;
    assertThat(api.post(run + "/updates/addItem", Map.of("input", Map.of("sku", "tea"))).status())
        .isEqualTo(202);
    // Held while the update came: the update task comes once this one is handed back.
    worker.complete(task, Map.of("next", Map.of("delayMs", 3_600_000)));
    assertThat(
            worker
                .answerUpdate(
                    worker.pollOne(), Map.of("status", "completed", "output", Map.of("items", 1)))
                .json()
                .get("outcome")
                .asText())
        .isEqualTo("ok");
    api.post(run + "/updates/checkout", Map.of("input", "now"));

    browser.open(runRoute("cart-page", runId));
    assertThat(browser.awaitText(".updates tr[data-update=addItem]", "completed"))
        .contains("{\"sku\":\"tea\"}")
        .contains("{\"items\":1}");
    assertThat(browser.text(".updates tr[data-update=checkout]")).contains("pending");
    browser.screenshot("run-updates");
  }

  @Test
  void cancellingARunTakesTheDialogsConfirmationAndTheServerCancelsIt() {
    long runId = server.worker("cancel-me").start(Map.of("n", 1));
    browser.open(runRoute("cancel-me", runId));
    assertThat(browser.text(".run-status")).isEqualTo("running");

    browser.click(".cancel-run");
    browser.awaitText("dialog#confirm[open] .confirm-title", "Cancel run #" + runId);
    browser.screenshot("confirm-cancel");
    browser.decline();
    assertThat(api.get("/v1/workflows/cancel-me/runs/" + runId).json().get("status").asText())
        .isEqualTo("running");

    browser.click(".cancel-run");
    browser.confirm("Cancel run #" + runId);

    assertThat(browser.awaitText("#notice", "cancelled")).contains("Run #" + runId);
    assertThat(browser.awaitText(".run-status", "cancelled")).isEqualTo("cancelled");
    assertThat(api.get("/v1/workflows/cancel-me/runs/" + runId).json().get("status").asText())
        .isEqualTo("cancelled");
    assertThat(browser.find(".cancel-run").isEnabled()).isFalse();
  }

  @Test
  void aRunsNewStatusShowsWithoutAReloadAndKeepsWhatTheUserTyped() {
    WorkerClient worker = server.worker("live");
    long runId = worker.start(Map.of("n", 2));
    browser.open(runRoute("live", runId));
    assertThat(browser.text(".run-status")).isEqualTo("running");
    browser.script("window.sameDocument = 'still here'");
    browser.type(".fork-form textarea[name=input]", "{\"n\": 3}");
    browser.type(".signal-form input[name=event]", "half-typed");

    var task = worker.pollOne();
    Api.Response end =
        worker.complete(
            task,
            Map.of(
                "step",
                WorkerClient.step("only-step", Map.of("ok", true)),
                "result",
                Map.of("status", "completed", "output", 2)));
    assertThat(end.status()).as(end.body()).isEqualTo(200);

    assertThat(browser.awaitText(".run-status", "completed")).isEqualTo("completed");
    assertThat(browser.script("return window.sameDocument")).isEqualTo("still here");
    assertThat(browser.find(".fork-form textarea[name=input]").getDomProperty("value"))
        .isEqualTo("{\"n\": 3}");
    assertThat(browser.find(".signal-form input[name=event]").getDomProperty("value"))
        .isEqualTo("half-typed");
    List<WebElement> options = browser.awaitCount(".fork-form select option", 1);
    assertThat(options.get(0).getText()).isEqualTo("only-step");

    browser.go("/workflows");
    assertThat(browser.awaitText("tr[data-workflow=live] td.throughput", "1")).isEqualTo("1");
  }
}
