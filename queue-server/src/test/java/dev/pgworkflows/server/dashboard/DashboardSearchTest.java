package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.WebElement;

/**
 * The dashboard's search page in a real browser over a real server: the runs of every workflow a
 * query selects, how many, and a query the server refuses shown with its reason and position.
 */
@Tag("browser")
class DashboardSearchTest {
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

  private static long start(String workflow, String customer, int amount) {
    Api.Response r =
        api.post(
            "/v1/workflows/" + workflow + "/runs",
            Map.of(
                "input",
                Map.of("order", amount),
                "attributes",
                Map.of("customer", customer, "amount", amount)));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    return r.json().get("runId").asLong();
  }

  @Test
  void aBulkCancelFromTheSearchPageSaysHowManyRunsBeforeItActsAndThenCancelsThem() {
    for (int i = 0; i < 3; i++) {
      api.post("/v1/workflows/bulk-export/runs", Map.of("input", i));
    }
    browser.open(
        "/search?q="
            + java.net.URLEncoder.encode(
                "workflow = 'bulk-export'", java.nio.charset.StandardCharsets.UTF_8));
    browser.awaitText(".search-results .count", "3 runs");
    browser.click(".bulk-actions button.cancel");
    assertThat(browser.awaitText("dialog#confirm[open] .confirm-title", "Cancel 3 runs?"))
        .isEqualTo("Cancel 3 runs?");
    browser.screenshot("search-bulk-cancel");
    browser.confirm("Cancel 3 runs?");
    assertThat(browser.awaitText("#notice", "Batch")).contains("cancel of 3 runs");
    assertThat(browser.awaitText(".batches td.status", "completed")).isEqualTo("completed");
    assertThat(
            api.get(
                    "/v1/runs/count?query="
                        + java.net.URLEncoder.encode(
                            "workflow = 'bulk-export' AND status = 'cancelled'",
                            java.nio.charset.StandardCharsets.UTF_8))
                .json()
                .get("count")
                .asLong())
        .isEqualTo(3);
    assertThat(api.get("/v1/audit?action=batch.create").json().get("entries")).hasSize(1);
  }

  private static List<String> shownRuns() {
    List<String> ids = new ArrayList<>();
    for (WebElement row : browser.all(".search-results tr[data-run]")) {
      ids.add(row.getAttribute("data-run"));
    }
    return ids;
  }

  @Test
  void aQueryShowsTheRunsItSelectsAndARefusedOneSaysWhereItIsWrong() {
    api.put("/v1/search-attributes/customer", Map.of("type", "text"));
    api.put("/v1/search-attributes/amount", Map.of("type", "number"));
    long a = start("invoice", "acme", 250);
    start("invoice", "globex", 40);
    long c = start("refund", "acme", 900);

    browser.open("/search");
    assertThat(browser.awaitText(".search-attributes", "customer")).contains("amount (number)");
    browser.type("input.query", "customer = 'acme' AND amount >= 100");
    browser.click(".filters button[type=submit]");
    browser.until(() -> shownRuns().size() == 2 ? true : null);
    assertThat(shownRuns()).containsExactly(String.valueOf(c), String.valueOf(a));
    assertThat(browser.text(".search-results .count")).isEqualTo("2 runs");
    assertThat(browser.text(".search-results tr[data-run='" + c + "']")).contains("refund");
    browser.screenshot("search");

    browser.click(".search-results tr[data-run='" + a + "'] a.run-link");
    browser.until(
        () ->
            browser.driver().getCurrentUrl().endsWith("/workflows/invoice/runs/" + a)
                ? true
                : null);

    browser.open("/search");
    browser.type("input.query", "amount = 'lots'");
    browser.click(".filters button[type=submit]");
    assertThat(browser.awaitText(".search-results .problem-detail", "query at 1"))
        .contains("amount is a number");
    assertThat(browser.consoleErrors()).isEmpty();
  }
}
