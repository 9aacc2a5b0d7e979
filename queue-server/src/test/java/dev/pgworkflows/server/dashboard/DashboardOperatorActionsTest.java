package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import dev.pgworkflows.server.testing.WorkerClient;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.support.ui.Select;

/**
 * An operator's actions from the dashboard, each through the page's confirmation dialog, and what
 * the server holds afterwards: pausing a workflow and a run, restarting and forking a run from a
 * step, parking a message group's head and re-driving it.
 */
@Tag("browser")
class DashboardOperatorActionsTest {
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

  /** A run of {@code workflow} that journaled step "a" and failed at step "b". */
  private static long failedAtB(String workflow) {
    WorkerClient worker = server.worker(workflow);
    long runId = worker.start(Map.of("n", 1));
    JsonNode task = worker.pollOne();
    Api.Response a =
        worker.complete(
            task,
            Map.of("step", WorkerClient.step("a", Map.of("a", 1)), "next", Map.of("inline", true)));
    Map<String, Object> error = Map.of("type", "IllegalStateException", "message", "b broke");
    Api.Response b =
        worker.complete(
            ((ObjectNode) task.deepCopy()).put("receipt", a.json().get("receipt").asText()),
            Map.of(
                "step",
                Map.of("name", "b", "kind", "run", "error", error),
                "result",
                Map.of("status", "failed", "error", error)));
    assertThat(b.json().get("outcome").asText()).as(b.body()).isEqualTo("ok");
    return runId;
  }

  private static JsonNode workflow(String name) {
    for (JsonNode w : api.get("/v1/workflows").json().get("workflows")) {
      if (w.get("name").asText().equals(name)) {
        return w;
      }
    }
    throw new AssertionError("no workflow " + name);
  }

  @Test
  void pausingAndResumingAWorkflowFromTheWorkflowsPage() {
    server.worker("nightly").start(Map.of());
    browser.open("/workflows");
    browser.click("tr[data-workflow=nightly] button.pause");
    browser.confirm("Pause workflow nightly");
    assertThat(browser.awaitText("tr[data-workflow=nightly]", "paused")).contains("Resume");
    assertThat(workflow("nightly").get("paused").asBoolean()).isTrue();

    browser.click("tr[data-workflow=nightly] button.resume");
    browser.confirm("Resume workflow nightly");
    assertThat(browser.awaitText("tr[data-workflow=nightly]", "active")).contains("Pause");
    assertThat(workflow("nightly").get("paused").asBoolean()).isFalse();
  }

  @Test
  void pausingARunShowsItAsItsBlockerAndResumingClearsIt() {
    long runId = server.worker("hold").start(Map.of());
    browser.open("/workflows/hold/runs/" + runId);
    browser.click(".pause-run");
    browser.confirm("Pause run #" + runId);
    assertThat(browser.awaitText(".blockers", "paused")).isNotEmpty();
    browser.find(".blockers li.blocker[data-kind=paused]");
    assertThat(browser.find(".run-paused").getText()).isEqualTo("paused");
    assertThat(api.get("/v1/workflows/hold/runs/" + runId).json().get("paused").asBoolean())
        .isTrue();

    browser.click(".resume-run");
    browser.confirm("Resume run #" + runId);
    browser.until(() -> browser.all(".blockers li.blocker[data-kind=paused]").isEmpty());
    assertThat(api.get("/v1/workflows/hold/runs/" + runId).json().get("paused").asBoolean())
        .isFalse();
  }

  @Test
  void restartingAFailedRunFromAStepSetsThatStepAsideAndRunsAgain() {
    long runId = failedAtB("restart-me");
    browser.open("/workflows/restart-me/runs/" + runId);
    assertThat(browser.text(".run-status")).isEqualTo("failed");
    assertThat(browser.text(".run-error")).contains("b broke");

    new Select(browser.find(".restart-form select")).selectByValue("b");
    browser.click(".restart-run");
    browser.confirm("Restart run #" + runId + " from step b");

    assertThat(browser.awaitText(".run-status", "running")).isEqualTo("running");
    assertThat(browser.awaitText(".run-timeline .tl-row.set-aside[data-step=b]", "set aside"))
        .isNotEmpty();
    JsonNode steps =
        api.get("/v1/workflows/restart-me/runs/" + runId + "/steps?setAside=true").json();
    assertThat(steps.at("/steps/1/name").asText()).isEqualTo("b");
    assertThat(steps.at("/steps/1/setAside").asBoolean()).isTrue();
    assertThat(server.worker("restart-me").journal(runId)).containsExactly("a");
  }

  @Test
  void forkingARunFromAStepWithNewInputOpensTheNewRun() {
    long runId = failedAtB("fork-me");
    browser.open("/workflows/fork-me/runs/" + runId);
    new Select(browser.find(".fork-form select")).selectByValue("b");
    browser.type(".fork-form textarea[name=input]", "{\"n\": 9}");
    browser.click(".fork-run");
    browser.confirm("Fork run #" + runId + " from step b");

    String link = browser.awaitText(".forked-from-link", "#" + runId);
    assertThat(link).isEqualTo("#" + runId);
    long forkId =
        Long.parseLong(browser.text(".run-header h1").replaceAll("^Run #(\\d+).*$", "$1"));
    assertThat(forkId).isNotEqualTo(runId);
    JsonNode fork = api.get("/v1/workflows/fork-me/runs/" + forkId).json();
    assertThat(fork.at("/forkedFrom/runId").asLong()).isEqualTo(runId);
    assertThat(fork.at("/input/n").asInt()).isEqualTo(9);
    assertThat(browser.text(".run-input")).contains("\"n\": 9");
  }

  @Test
  void parkingAGroupsHeadAndReDrivingItFromTheQueuePage() {
    api.put("/v1/queues/parcels", Map.of("fifo", true));
    api.post(
        "/v1/queues/parcels/messages", Map.of("body", Map.of("parcel", 1), "groupId", "van-3"));
    api.post(
        "/v1/queues/parcels/messages", Map.of("body", Map.of("parcel", 2), "groupId", "van-3"));

    browser.open("/queues/parcels");
    browser.type(".group-form input[name=group]", "van-3");
    browser.click(".group-form .park-group");
    browser.confirm("Park the head message of group van-3");
    assertThat(browser.awaitText(".parked", "van-3")).contains("\"parcel\": 1");
    assertThat(api.get("/v1/queues/parcels/parked").json().get("messages")).hasSize(1);
    browser.screenshot("queue-parked");

    browser.click(".parked tr[data-id] .redrive");
    browser.confirm("Re-drive parked message");
    assertThat(browser.awaitText(".parked", "No parked message.")).isNotEmpty();
    assertThat(api.get("/v1/queues/parcels/parked").json().get("messages")).isEmpty();
    assertThat(api.get("/v1/queues/parcels").json().at("/metrics/depth").asLong()).isEqualTo(2);
  }
}
