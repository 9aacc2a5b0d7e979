package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
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

/**
 * What the dashboard shows that the API had and the pages did not: a run's search attributes,
 * state, streams, continue-as-new chain and its key's rate limit; the schedules with their next
 * ticks; the audit trail. In a real browser over a real server.
 */
@Tag("browser")
class DashboardRunHoldingsTest {
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

  @Test
  void aRunsPageShowsItsAttributesStateStreamsChainAndRateLimit() {
    api.put("/v1/search-attributes/customer", Map.of("type", "text"));
    api.put("/v1/rate-limits/acme", Map.of("limit", 5, "periodMs", 60_000));
    WorkerClient worker = new WorkerClient(api, "report");
    long first =
        WorkerClient.created(
            worker.startWith(
                Map.of(
                    "input", Map.of("month", 1),
                    "concurrencyKey", "acme",
                    "attributes", Map.of("customer", "acme"))));
    JsonNode task = worker.pollOne();
    assertThat(task.get("runId").asLong()).isEqualTo(first);
    api.post(
        "/v1/workflows/report/runs/" + first + "/streams/progress",
        Map.of(
            "entries",
            List.of(
                Map.of("writer", "", "seq", 0, "value", Map.of("done", 1)),
                Map.of("writer", "", "seq", 1, "value", Map.of("done", 2)))));
    Api.Response continued =
        api.post(
            "/v1/workflows/report/runs/" + first + "/continue-as-new",
            Map.of(
                "messageId", task.get("messageId").asLong(),
                "receipt", task.get("receipt").asText(),
                "input", Map.of("month", 2),
                "step",
                    Map.of(
                        "name",
                        "count",
                        "kind",
                        "run",
                        "output",
                        42,
                        "state",
                        Map.of("rows", 42, "phase", "counted"))));
    assertThat(continued.status()).as(continued.body()).isEqualTo(200);
    long second = continued.json().get("continuedTo").asLong();

    browser.open("/workflows/report/runs/" + first);
    assertThat(browser.awaitText(".run-attributes [data-attribute=customer] dd", "acme"))
        .isEqualTo("\"acme\"");
    assertThat(browser.awaitText(".run-state tr[data-key=phase]", "counted")).contains("phase");
    assertThat(browser.text(".run-state tr[data-key=rows]")).contains("42");
    assertThat(browser.text(".run-streams [data-stream=progress] h3"))
        .containsIgnoringCase("2 entries, closed");
    assertThat(browser.text(".run-streams [data-stream=progress] tr[data-offset='1']"))
        .contains("{\"done\":2}");
    assertThat(browser.text(".run-chain tr[data-run='" + second + "']")).contains("running");
    assertThat(browser.text(".run-rate-limit")).contains("5 per 60000 ms");
    browser.screenshot("run-holdings");
    browser.click(".run-chain tr[data-run='" + second + "'] a.chain-link");
    browser.until(
        () ->
            browser.driver().getCurrentUrl().endsWith("/workflows/report/runs/" + second)
                ? true
                : null);
  }

  @Test
  void theSchedulesAndTheAuditTrailHaveTheirPages() {
    api.post(
        "/v1/schedules",
        Map.of(
            "name", "nightly-report",
            "workflow", "report",
            "cron", "0 3 * * *",
            "overlap", "buffer_one",
            "pauseAfterFailures", 3));
    browser.open("/schedules");
    String row = ".schedules-list tr[data-schedule=nightly-report]";
    assertThat(browser.awaitText(row + " td.overlap", "buffer one")).isEqualTo("buffer one");
    assertThat(browser.text(row + " td.failures")).isEqualTo("0 of 3");
    assertThat(browser.text(row + " td.next-tick")).isNotEqualTo("—");
    browser.screenshot("schedules");

    api.put("/v1/rate-limits/globex", Map.of("limit", 1, "periodMs", 1000));
    browser.open("/audit");
    assertThat(browser.awaitText(".audit-list tr[data-action='ratelimit.put'] td.target", "globex"))
        .isEqualTo("globex");
    browser.type(".filters input[name=action]", "schedule.create");
    browser.click(".filters button[type=submit]");
    browser.until(() -> browser.all(".audit-list tr[data-action]").size() == 1 ? true : null);
    assertThat(browser.text(".audit-list tr[data-action] td.details")).contains("nightly-report");
    browser.screenshot("audit");
    assertThat(browser.consoleErrors()).isEmpty();
  }
}
