package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/** A workflow's runs in the dashboard: the list API's filters and its cursor pages. */
@Tag("browser")
class DashboardRunsListTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

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

  private static List<String> shownRuns() {
    return browser.until(
        () -> {
          List<String> ids = new ArrayList<>();
          for (WebElement row : browser.all(".runs-list tr[data-run]")) {
            ids.add(row.getAttribute("data-run"));
          }
          return ids.isEmpty() ? null : ids;
        });
  }

  @Test
  void theRunsPageFiltersByInputFieldAndStatusAndPagesByCursor() {
    WorkerClient worker = server.worker("paged");
    List<Long> started = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      started.add(
          worker.start(Map.of("i", i, "customer", Map.of("tier", i % 3 == 0 ? "gold" : "basic"))));
    }
    server.api().delete("/v1/workflows/paged/runs/" + started.get(0));

    browser.open("/workflows/paged");
    assertThat(shownRuns()).hasSize(25).first().isEqualTo(started.get(29).toString());
    browser.click(".pager .next");
    browser.until(() -> shownRuns().size() == 5 ? true : null);
    assertThat(shownRuns()).last().isEqualTo(started.get(0).toString());
    assertThat(browser.text(".page-label")).isEqualTo("page 2");
    browser.click(".pager .prev");
    browser.until(() -> shownRuns().size() == 25 ? true : null);

    browser.type(".input-filter input[name=path]", "customer.tier");
    browser.type(".input-filter input[name=value]", "gold");
    browser.click(".filters button[type=submit]");
    browser.until(() -> shownRuns().size() == 10 ? true : null);
    assertThat(browser.driver().getCurrentUrl()).endsWith("?input.customer.tier=gold");

    new Select(browser.find(".filters select[name=status]")).selectByValue("cancelled");
    browser.click(".filters button[type=submit]");
    browser.until(() -> shownRuns().size() == 1 ? true : null);
    assertThat(shownRuns()).containsExactly(started.get(0).toString());
    assertThat(browser.find(".input-filter input[name=value]").getDomProperty("value"))
        .isEqualTo("gold");
  }

  @Test
  void theRunsPageShowsTheWorkflowsConcurrencyLimitAndStrategy() {
    server
        .api()
        .put(
            "/v1/workflows/limited-page/concurrency",
            Map.of(
                "limit",
                2,
                "strategy",
                "cancel_in_progress",
                "limitFrom",
                "$.plan",
                "limits",
                Map.of("premium", 5),
                "totalLimit",
                6,
                "weights",
                Map.of("acme", 2)));
    server.api().put("/v1/workflows/limited-page/concurrency/acme", Map.of("limit", 7));
    server
        .api()
        .put(
            "/v1/workflows/limited-page/throttle",
            Map.of("limit", 100, "periodMs", 60_000, "burst", 5, "perKey", true));
    server
        .api()
        .post(
            "/v1/topics/visits.%23/subscriptions",
            Map.of(
                "type",
                "workflow",
                "name",
                "limited-page",
                "batch",
                Map.of("maxSize", 50, "timeoutMs", 5_000, "key", "$.site")));
    server
        .api()
        .put(
            "/v1/workflows/limited-page/routing",
            Map.of(
                "require",
                Map.of("gpu", "true"),
                "prefer",
                Map.of("region", "eu"),
                "sticky",
                true));
    server.worker("limited-page").start(Map.of("plan", "free"));

    browser.open("/workflows/limited-page");
    assertThat(browser.awaitText(".concurrency", "keys' own limits"))
        .isEqualTo(
            "Concurrency 2 per key, strategy cancel in progress, limit from $.plan (premium=5), 6"
                + " in all, keys in turn (weights acme=2); keys' own limits: acme=7");
    assertThat(browser.awaitText(".topics", "Topics"))
        .isEqualTo("Topics visits.# in batches of up to 50 or 5.0 s per $.site");
    assertThat(browser.awaitText(".throttle", "Throttle"))
        .isEqualTo("Throttle 100 starts per 1 min 00 s, 5 at once, per key");
    assertThat(browser.awaitText(".routing", "Workers"))
        .isEqualTo(
            "Workers only workers with gpu=true; workers with region=eu first; each run sticks to"
                + " its worker");

    server.worker("unlimited-page").start(Map.of());
    browser.open("/workflows/unlimited-page");
    assertThat(browser.awaitText(".concurrency", "No concurrency limit"))
        .startsWith("No concurrency limit");
  }
}
