package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import java.util.logging.Level;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless Chromium driven through its chromedriver, both named explicitly so nothing is
 * looked up or downloaded; one per test class. Waits are short and explicit: a page loads its data
 * as it opens and the dashboard refreshes most pages every 2 s (the workflows list every 15 s), so
 * whatever a test waits for shows within a few seconds.
 */
final class Browser implements AutoCloseable {
  static final String CHROMIUM = "/usr/bin/chromium";
  static final String CHROMEDRIVER = "/usr/bin/chromedriver";
  static final Path SCREENSHOTS = Path.of("target", "screenshots");
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final int WIDTH = 1400;
  private static final int HEIGHT = 1000;

  private final ChromeDriver driver;
  private final Supplier<String> base;

  private Browser(ChromeDriver driver, Supplier<String> base) {
    this.driver = driver;
    this.base = base;
  }

  /**
   * A browser for the server at {@code base} (read when a page is opened). Without Chromium and its
   * driver (a developer's machine) the test class is skipped and says why; in CI, which installs
   * them (.ci/run), it fails instead.
   */
  static Browser start(Supplier<String> base) {
    boolean installed =
        Files.isExecutable(Path.of(CHROMIUM)) && Files.isExecutable(Path.of(CHROMEDRIVER));
    if (!installed) {
      assertThat(System.getenv("CI"))
          .as("CI installs Chromium and chromedriver (.ci/run): the browser tests must run there")
          .isNotEqualTo("true");
      assumeTrue(
          false,
          "the dashboard's browser tests need Debian's chromium and chromium-driver ("
              + CHROMIUM
              + ", "
              + CHROMEDRIVER
              + ")");
    }
    System.setProperty("webdriver.chrome.driver", CHROMEDRIVER);
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=" + WIDTH + "," + HEIGHT,
        "--hide-scrollbars",
        "--lang=en-US");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    ChromeDriverService service =
        new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER)).build();
    return new Browser(new ChromeDriver(service, options), base);
  }

  ChromeDriver driver() {
    return driver;
  }

  /**
   * Loads the dashboard afresh at this hash route (e.g. {@code "/queues"}): by way of a blank page,
   * since a URL that differs from the current one only in its hash would not load it again. The
   * tab's session storage (the token) stays.
   */
  void open(String route) {
    driver.get("about:blank");
    driver.get(base.get() + "/ui#" + route);
  }

  /** Moves to a hash route inside the loaded page, without loading it again. */
  void go(String route) {
    driver.executeScript("location.hash = arguments[0]", route);
  }

  /** The visible element, waiting for it. */
  WebElement find(String css) {
    return new WebDriverWait(driver, WAIT)
        .ignoring(StaleElementReferenceException.class)
        .until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(css)));
  }

  List<WebElement> all(String css) {
    return driver.findElements(By.cssSelector(css));
  }

  /** The text of the visible element, waiting for it. */
  String text(String css) {
    return until(() -> find(css).getText());
  }

  /** Waits until the element's text contains {@code expected}; answers the text. */
  String awaitText(String css, String expected) {
    return until(
        () -> {
          String t = find(css).getText();
          return t.contains(expected) ? t : null;
        });
  }

  /** Waits until at least {@code n} elements match. */
  List<WebElement> awaitCount(String css, int n) {
    return until(
        () -> {
          List<WebElement> found = all(css);
          return found.size() >= n ? found : null;
        });
  }

  /** Clicks the element once it is clickable, again if the refresh replaced it meanwhile. */
  void click(String css) {
    until(
        () -> {
          new WebDriverWait(driver, WAIT)
              .until(ExpectedConditions.elementToBeClickable(By.cssSelector(css)))
              .click();
          return true;
        });
  }

  /** Types into a field, replacing what it held. */
  void type(String css, String text) {
    WebElement field = find(css);
    field.clear();
    field.sendKeys(text);
  }

  /** The page's confirmation dialog: waits for it, checks its title, and presses its button. */
  String confirm(String titleContains) {
    String title = awaitText("dialog#confirm[open] .confirm-title", titleContains);
    click("dialog#confirm[open] .confirm-ok");
    new WebDriverWait(driver, WAIT)
        .until(d -> all("dialog#confirm[open]").isEmpty() ? Boolean.TRUE : null);
    return title;
  }

  /** Presses the dialog's "Back": the action is not taken. */
  void decline() {
    click("dialog#confirm[open] .confirm-cancel");
    new WebDriverWait(driver, WAIT)
        .until(d -> all("dialog#confirm[open]").isEmpty() ? Boolean.TRUE : null);
  }

  /**
   * What the page wrote to the console as errors since the last call, less the failed requests (an
   * API's 4xx is logged by the browser too, and the page shows it as it should).
   */
  List<String> consoleErrors() {
    return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
        .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
        .map(LogEntry::getMessage)
        .filter(m -> !m.contains("Failed to load resource"))
        .toList();
  }

  Object script(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(js, args);
  }

  /**
   * Saves the whole page (the window grown to its height for the shot) as {@code
   * target/screenshots/<name>.png}; answers the file.
   */
  Path screenshot(String name) {
    long height = ((Number) script("return document.documentElement.scrollHeight")).longValue();
    driver
        .manage()
        .window()
        .setSize(new Dimension(WIDTH, (int) Math.min(4000, Math.max(HEIGHT, height))));
    script("window.scrollTo(0, 0)");
    try {
      File shot = driver.getScreenshotAs(OutputType.FILE);
      Files.createDirectories(SCREENSHOTS);
      Path target = SCREENSHOTS.resolve(name + ".png");
      Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      driver.manage().window().setSize(new Dimension(WIDTH, HEIGHT));
    }
  }

  /** Until {@code probe} answers non-null (stale elements retried), or fails after the wait. */
  <T> T until(Supplier<T> probe) {
    return new WebDriverWait(driver, WAIT)
        .ignoring(StaleElementReferenceException.class)
        .until(d -> probe.get());
  }

  @Override
  public void close() {
    driver.quit();
  }
}
