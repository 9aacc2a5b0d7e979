package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** On a server that wants tokens, the dashboard asks for one and keeps it for the tab. */
@Tag("browser")
class DashboardSignInTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with(
          "WORKFLOWS_API_TOKENS", "viewer:read=token-of-the-viewer;ops:admin,read=token-of-ops");

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
  void aServerThatWantsATokenGetsTheSignInFormAndTheTokenOpensTheDashboard() {
    server.api().withToken("token-of-ops").put("/v1/queues/signed", Map.of("fifo", false));

    browser.open("/queues");
    assertThat(browser.text("#signin .signin-message")).contains("wants a token");
    assertThat(browser.all("#app").get(0).isDisplayed()).isFalse();
    browser.screenshot("sign-in");

    browser.type("#signin input[name=token]", "not-a-token");
    browser.click("#signin button[type=submit]");
    assertThat(browser.awaitText("#signin .signin-message", "did not accept")).isNotEmpty();

    browser.type("#signin input[name=token]", "token-of-the-viewer");
    browser.click("#signin button[type=submit]");
    assertThat(browser.text("tr[data-queue=signed]")).contains("signed");
    assertThat(browser.script("return sessionStorage.getItem('pgworkflows.token')"))
        .isEqualTo("token-of-the-viewer");

    // A reload keeps the tab's token.
    browser.open("/queues");
    assertThat(browser.text("tr[data-queue=signed]")).contains("signed");

    // A token without the action's scope: the server's 403, in its own words.
    browser.click("tr[data-queue=signed] a.queue-link");
    browser.type(".group-form input[name=group]", "g-7");
    browser.click(".group-form .pause-group");
    browser.confirm("Pause group g-7 of signed");
    assertThat(browser.awaitText("#notice.error .problem-title", "Forbidden"))
        .isEqualTo("Forbidden");
    assertThat(browser.text("#notice.error .problem-detail"))
        .contains("token \"viewer\" lacks scope \"admin\"");
    assertThat(browser.all("#signin").get(0).isDisplayed()).isFalse();

    browser.click("#signout");
    assertThat(browser.find("#signin").isDisplayed()).isTrue();
    assertThat(browser.script("return sessionStorage.getItem('pgworkflows.token')")).isNull();
  }
}
