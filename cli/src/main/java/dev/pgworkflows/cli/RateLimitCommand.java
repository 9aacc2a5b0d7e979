package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code pgw rate-limit KEY}: a key's rate limit, and until when it is held back. */
@Command(name = "rate-limit", description = "A key's rate limit and whether it is held back.")
final class RateLimitCommand extends ApiCommand {
  @Parameters(index = "0", paramLabel = "KEY", description = "The key (a run's concurrency key).")
  String key;

  @Override
  Answer request(Api api) {
    return api.get(Api.path("v1", "rate-limits", key));
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    out.println(
        answer.path("key").asText()
            + ": "
            + (answer.has("limit")
                ? answer.get("limit").asInt() + " per " + answer.path("periodMs").asLong() + " ms"
                : "no limit")
            + (answer.hasNonNull("suspendedUntil")
                ? ", held back until " + answer.get("suspendedUntil").asText()
                : ""));
  }
}
