package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code WORKFLOWS_API_TOKENS}: named tokens with scopes, plain or as SHA-256 digests, the older
 * comma-separated form, and configuration mistakes refused with the variable's name and never the
 * token.
 */
class TokenConfigurationTest {
  private static final String SECRET = "s3cret-never-in-messages";

  private static String sha256(String token) {
    return HexFormat.of().formatHex(ApiToken.digest(token));
  }

  @Test
  void aTokenGivenAsItsDigestIsAcceptedAndTheDigestItselfIsNot() {
    String digest = sha256("ops-plain-token");
    try (TestServer server =
        TestServer.start(
            Map.of(
                "WORKFLOWS_API_TOKENS",
                "ops:admin,read=sha256:" + digest.toUpperCase() + "; ci:worker=ci-plain-token"))) {
      Api api = server.api();
      assertThat(api.withToken("ops-plain-token").get("/v1/audit").status()).isEqualTo(200);
      assertThat(api.withToken("ops-plain-token").get("/v1/queues").status()).isEqualTo(200);
      assertThat(api.withToken("sha256:" + digest).get("/v1/queues").status()).isEqualTo(401);
      assertThat(api.withToken(digest).get("/v1/queues").status()).isEqualTo(401);
      assertThat(api.withToken("ci-plain-token").get("/v1/queues").status()).isEqualTo(403);
    }
  }

  @Test
  void entriesNameATokenItsScopesAndItsPlainOrHashedValue() {
    List<ApiToken> tokens =
        ApiToken.parse("ci-worker:worker=abc;\n ops : admin, read = sha256:" + sha256("x") + " ;;");
    assertThat(tokens)
        .containsExactly(
            new ApiToken("ci-worker", EnumSet.of(Scope.WORKER), sha256("abc")),
            new ApiToken("ops", EnumSet.of(Scope.ADMIN, Scope.READ), sha256("x")));
    assertThat(tokens.get(1).toString()).isEqualTo("ops [read, admin]");
  }

  @Test
  void theOlderCommaSeparatedFormGivesEachTokenEveryScope() {
    assertThat(ApiToken.parse(" alpha, beta== "))
        .containsExactly(
            new ApiToken("token-1", EnumSet.allOf(Scope.class), sha256("alpha")),
            new ApiToken("token-2", EnumSet.allOf(Scope.class), sha256("beta==")));
    assertThat(ApiToken.parse("  ")).isEmpty();
  }

  @Test
  void mistakesAreRefusedNamingTheVariableAndTheEntryButNeverTheToken() {
    Map<String, String> refused =
        Map.of(
            "ops:admn=" + SECRET,
            "token \"ops\": unknown scope \"admn\" (scopes are read, start, worker, admin)",
            "ops:=" + SECRET,
            "token \"ops\" has no scope",
            "ops:admin=",
            "token \"ops\" is empty",
            "ops:admin=sha256:abc",
            "token \"ops\": a sha256 digest is 64 hex digits",
            "bad name:admin=" + SECRET,
            "token name \"bad name\" must be 1 to 64 characters",
            "ops:admin=" + SECRET + ";" + SECRET,
            "entry 2 is not name:scope[,scope...]=token",
            "a:read=" + SECRET + ";a:admin=other",
            "the name \"a\" is given to more than one token",
            "a:read=" + SECRET + ";b:admin=" + SECRET,
            "token \"b\" is the same token as an earlier one");
    refused.forEach(
        (value, message) ->
            assertThatThrownBy(() -> ServerConfig.from(Map.of("WORKFLOWS_API_TOKENS", value)))
                .as(value)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("WORKFLOWS_API_TOKENS: " + message)
                .hasMessageNotContaining(SECRET));
  }
}
