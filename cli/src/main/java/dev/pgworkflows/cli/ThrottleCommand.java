package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw workflows throttle WORKFLOW}: the workflow's throttle; with {@code --limit} and {@code
 * --period-ms} (and {@code --burst}, {@code --per-key}) it sets it, with {@code --remove} it
 * removes it.
 */
@Command(
    name = "throttle",
    description =
        "Show, set (--limit with --period-ms, --burst, --per-key) or remove (--remove) the"
            + " workflow's throttle: starts beyond the rate wait their turn.")
final class ThrottleCommand extends ApiCommand {
  @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The workflow's name.")
  String workflow;

  @Option(names = "--limit", paramLabel = "N", description = "Starts per period, 1-1000000.")
  Integer limit;

  @Option(names = "--period-ms", paramLabel = "MS", description = "The period, 1 ms to a day.")
  Long periodMs;

  @Option(names = "--burst", paramLabel = "N", description = "Starts at once (default 1).")
  Integer burst;

  @Option(names = "--per-key", description = "A rate for each concurrency key.")
  boolean perKey;

  @Option(names = "--remove", description = "Remove the workflow's throttle.")
  boolean remove;

  @Override
  Answer request(Api api) {
    String path = Api.path("v1", "workflows", workflow, "throttle");
    if (!remove && limit == null && periodMs == null && burst == null && !perKey) {
      return api.get(path);
    }
    ObjectNode body = Json.object();
    if (remove) {
      body.putNull("limit");
    } else {
      if (limit != null) {
        body.put("limit", limit);
      }
      if (periodMs != null) {
        body.put("periodMs", periodMs);
      }
      if (burst != null) {
        body.put("burst", burst);
      }
      if (perKey) {
        body.put("perKey", true);
      }
    }
    return api.put(path, body);
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    String name = answer.path("workflow").asText(workflow);
    if (!answer.has("limit")) {
      out.println(name + ": no throttle");
      return;
    }
    out.println(
        name
            + ": "
            + answer.get("limit").asInt()
            + " starts per "
            + answer.path("periodMs").asLong()
            + " ms, "
            + answer.path("burst").asInt(1)
            + " at once"
            + (answer.path("perKey").asBoolean() ? ", per key" : ""));
  }
}
