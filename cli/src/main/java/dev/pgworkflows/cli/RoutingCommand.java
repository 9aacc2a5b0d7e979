package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pgw workflows routing WORKFLOW}: which workers take the workflow's runs; with {@code
 * --require}, {@code --prefer} or {@code --sticky} it sets that (replacing what was set), with
 * {@code --remove} it lets any worker take them.
 */
@Command(
    name = "routing",
    description =
        "Show, set (--require, --prefer, --sticky) or remove (--remove) which workers take the"
            + " workflow's runs, by the labels they declare.")
final class RoutingCommand extends ApiCommand {
  @Parameters(index = "0", paramLabel = "WORKFLOW", description = "The workflow's name.")
  String workflow;

  @Option(
      names = "--require",
      paramLabel = "NAME=VALUE",
      split = ",",
      description = "Labels a worker must have, such as gpu=true,region=eu.")
  Map<String, String> require;

  @Option(
      names = "--prefer",
      paramLabel = "NAME=VALUE",
      split = ",",
      description = "Labels of the workers that go first while one is listed.")
  Map<String, String> prefer;

  @Option(
      names = "--sticky",
      description = "A run's tasks go to the worker that took its last one, while it lives.")
  boolean sticky;

  @Option(names = "--remove", description = "Let any worker take the workflow's runs.")
  boolean remove;

  @Override
  Answer request(Api api) {
    String path = Api.path("v1", "workflows", workflow, "routing");
    if (!remove && require == null && prefer == null && !sticky) {
      return api.get(path);
    }
    ObjectNode body = Json.object();
    if (!remove) {
      if (require != null) {
        require.forEach(body.putObject("require")::put);
      }
      if (prefer != null) {
        prefer.forEach(body.putObject("prefer")::put);
      }
      body.put("sticky", sticky);
    }
    return api.put(path, body);
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    String name = answer.path("workflow").asText(workflow);
    StringJoiner parts = new StringJoiner("; ");
    if (answer.path("require").isObject()) {
      parts.add("requires " + labels(answer.get("require")));
    }
    if (answer.path("prefer").isObject()) {
      parts.add("prefers " + labels(answer.get("prefer")));
    }
    if (answer.path("sticky").asBoolean()) {
      parts.add("sticky");
    }
    out.println(name + ": " + (parts.length() == 0 ? "any worker" : parts.toString()));
  }

  /** Labels as name=value, by name; "-" for none. */
  static String labels(JsonNode labels) {
    TreeMap<String, String> sorted = new TreeMap<>();
    labels.properties().forEach(e -> sorted.put(e.getKey(), e.getValue().asText()));
    StringJoiner j = new StringJoiner(",");
    sorted.forEach((k, v) -> j.add(k + "=" + v));
    return sorted.isEmpty() ? "-" : j.toString();
  }
}
