package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw workflows concurrency WORKFLOW}: the workflow's concurrency limit per key with its
 * strategy, where the limit comes from the input, its total over all keys and the keys' own limits;
 * with {@code --limit} (and {@code --strategy}, {@code --limit-from}, {@code --limits}, {@code
 * --total}, {@code --weights}) it sets them, with {@code --remove} it removes the limit.
 */
@Command(
    name = "concurrency",
    description =
        "Show, set (--limit with --strategy, --limit-from, --limits) or remove (--remove) the"
            + " workflow's concurrency limit per key.")
final class ConcurrencyCommand extends ApiCommand {
  @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The workflow's name.")
  String workflow;

  @Option(names = "--limit", paramLabel = "N", description = "Runs of each key at once, 1-100000.")
  Integer limit;

  @Option(
      names = "--strategy",
      paramLabel = "STRATEGY",
      description = "queue (default), cancel_in_progress, cancel_newest or skip.")
  String strategy;

  @Option(
      names = "--limit-from",
      paramLabel = "PATH",
      description = "A JSON path into the run's input whose value gives its key's limit.")
  String limitFrom;

  @Option(
      names = "--limits",
      paramLabel = "VALUE=N",
      split = ",",
      description = "The limit for each value at --limit-from, such as premium=10,free=1.")
  Map<String, Integer> limits;

  @Option(
      names = "--total",
      paramLabel = "N",
      description = "At most N runs of all keys at once, shared between keys in turn.")
  Integer total;

  @Option(
      names = "--weights",
      paramLabel = "KEY=W",
      split = ",",
      description = "Keys' weights in the turns of --total, such as acme=3 (others weigh 1).")
  Map<String, Integer> weights;

  @Option(names = "--remove", description = "Remove the workflow's limit.")
  boolean remove;

  @Override
  Answer request(Api api) {
    String path = Api.path("v1", "workflows", workflow, "concurrency");
    if (!remove
        && limit == null
        && strategy == null
        && limitFrom == null
        && limits == null
        && total == null
        && weights == null) {
      return api.get(path);
    }
    ObjectNode body = Json.object();
    if (remove) {
      body.putNull("limit");
    } else {
      if (limit != null) {
        body.put("limit", limit);
      }
      if (strategy != null) {
        body.put("strategy", strategy);
      }
      if (limitFrom != null) {
        body.put("limitFrom", limitFrom);
      }
      if (limits != null) {
        ObjectNode m = body.putObject("limits");
        limits.forEach(m::put);
      }
      if (total != null) {
        body.put("totalLimit", total);
      }
      if (weights != null) {
        ObjectNode m = body.putObject("weights");
        weights.forEach(m::put);
      }
    }
    return api.put(path, body);
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    String name = answer.path("workflow").asText(workflow);
    if (!answer.has("limit")) {
      out.println(name + ": no concurrency limit");
    } else {
      StringBuilder line =
          new StringBuilder(name)
              .append(": ")
              .append(answer.get("limit").asInt())
              .append(" per key, strategy ")
              .append(answer.path("strategy").asText("queue"));
      if (answer.has("limitFrom")) {
        line.append(", limit from ").append(answer.get("limitFrom").asText());
        line.append(pairs(answer.path("limits"), " (", ")"));
      }
      if (answer.has("totalLimit")) {
        line.append(", ")
            .append(answer.get("totalLimit").asInt())
            .append(" in all, keys in turn")
            .append(pairs(answer.path("weights"), " (weights ", ")"));
      }
      out.println(line);
    }
    if (answer.path("keys").size() > 0) {
      Table table = new Table("KEY", "LIMIT");
      for (JsonNode k : answer.get("keys")) {
        table.row(k.path("key").asText(), k.path("limit").asInt());
      }
      table.print(out);
    }
  }

  /**
   * "name=n, ..." of a JSON object of numbers between {@code open} and {@code close}; "" if none.
   */
  private static String pairs(JsonNode object, String open, String close) {
    if (object.isEmpty()) {
      return "";
    }
    StringBuilder pairs = new StringBuilder();
    for (Map.Entry<String, JsonNode> e : object.properties()) {
      pairs
          .append(pairs.isEmpty() ? "" : ", ")
          .append(e.getKey())
          .append("=")
          .append(e.getValue().asInt());
    }
    return open + pairs + close;
  }
}
