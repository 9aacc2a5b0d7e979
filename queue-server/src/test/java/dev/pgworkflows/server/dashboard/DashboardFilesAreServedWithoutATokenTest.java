package dev.pgworkflows.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.Api;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The dashboard's page and files need no token (the page holds no data), carry a policy that lets
 * the page run only its own scripts, and are revalidated by ETag.
 */
class DashboardFilesAreServedWithoutATokenTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_API_TOKENS", "viewer:read=token-of-the-viewer");

  private static final Api anyone = server.api().withToken(null);

  @Test
  void thePageAndItsFilesAnswerWithoutATokenWithTheirContentTypes() {
    for (String path : new String[] {"/ui", "/ui/", "/ui/index.html"}) {
      Api.Response page = anyone.get(path);
      assertThat(page.status()).as(path).isEqualTo(200);
      assertThat(page.header("Content-Type")).startsWith("text/html");
      assertThat(page.body()).contains("<script type=\"module\" src=\"/ui/app.js\">");
    }
    assertThat(anyone.get("/ui/app.js").header("Content-Type")).startsWith("text/javascript");
    assertThat(anyone.get("/ui/style.css").header("Content-Type")).startsWith("text/css");
    assertThat(anyone.get("/ui/icon.svg").header("Content-Type")).startsWith("image/svg+xml");
    assertThat(anyone.get("/v1/queues").status()).isEqualTo(401);
  }

  @Test
  void everyAnswerForbidsInlineScriptsAndOtherOriginsAndIsRevalidatedByItsETag() {
    Api.Response script = anyone.get("/ui/app.js");
    String policy = script.header("Content-Security-Policy");
    assertThat(policy).contains("script-src 'self'").contains("connect-src 'self'");
    assertThat(policy).doesNotContain("unsafe-inline").doesNotContain("http");
    assertThat(script.header("Cache-Control")).isEqualTo("no-cache");
    assertThat(script.header("X-Content-Type-Options")).isEqualTo("nosniff");
    String etag = script.header("ETag");
    assertThat(etag).matches("\"[0-9a-f]{32}\"");

    Api.Response again = anyone.send("GET", "/ui/app.js", null, Map.of("If-None-Match", etag));
    assertThat(again.status()).isEqualTo(304);
    assertThat(again.body()).isEmpty();
    Api.Response other = anyone.send("GET", "/ui/app.js", null, Map.of("If-None-Match", "\"x\""));
    assertThat(other.status()).isEqualTo(200);
  }

  @Test
  void aFileTheDashboardDoesNotHaveIsA404Problem() {
    for (String path :
        new String[] {"/ui/nope.js", "/ui/logback.xml", "/ui/..%2Flogback.xml", "/ui/APP.JS"}) {
      Api.Response r = anyone.get(path);
      assertThat(r.status()).as(path).isEqualTo(404);
      assertThat(r.isProblem()).as(path).isTrue();
    }
  }
}
