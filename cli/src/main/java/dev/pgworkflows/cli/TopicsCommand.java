package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code pgw topics}: subscriptions of topic patterns, and publishing. */
@Command(
    name = "topics",
    description = "Topic subscriptions and publishing.",
    synopsisSubcommandLabel = "COMMAND",
    subcommands = {
      TopicsCommand.Subscriptions.class,
      TopicsCommand.Subscribe.class,
      TopicsCommand.Unsubscribe.class,
      TopicsCommand.Publish.class
    })
final class TopicsCommand {
  private TopicsCommand() {}

  @Command(
      name = "subscriptions",
      description = "Every subscription, or those of exactly one pattern.")
  static final class Subscriptions extends ApiCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "PATTERN", description = "The pattern.")
    String pattern;

    @Override
    Answer request(Api api) {
      return api.get(
          pattern == null
              ? "/v1/subscriptions"
              : Api.path("v1", "topics", pattern, "subscriptions"));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("ID", "PATTERN", "TYPE", "TARGET", "SIGNED", "CREATED");
      for (JsonNode s : answer.path("subscriptions")) {
        table.row(
            s.path("id").asLong(),
            s.path("pattern").asText(),
            s.path("type").asText(),
            s.hasNonNull("url") ? s.get("url").asText() : s.path("name").asText(),
            s.path("signed").asBoolean() ? "yes" : "no",
            Cells.cell(s.path("createdAt")));
      }
      table.print(out);
    }
  }

  /** Where a subscription delivers: exactly one of a queue, a workflow or a URL. */
  static final class Target {
    @Option(names = "--queue", paramLabel = "QUEUE", required = true, description = "A queue.")
    String queue;

    @Option(
        names = "--workflow",
        paramLabel = "WORKFLOW",
        required = true,
        description = "A workflow: each message starts a run.")
    String workflow;

    @Option(
        names = "--webhook",
        paramLabel = "URL",
        required = true,
        description = "An http(s) endpoint (a webhook).")
    String url;
  }

  @Command(
      name = "subscribe",
      description = "Subscribe a queue, a workflow or a webhook to a topic pattern.")
  static final class Subscribe extends ApiCommand {
    @Parameters(
        index = "0",
        paramLabel = "PATTERN",
        description = "Dot-separated; * matches one segment, a final # the rest.")
    String pattern;

    @ArgGroup(multiplicity = "1")
    Target target;

    @Option(
        names = "--secret",
        paramLabel = "SECRET",
        description = "Signs webhook deliveries (16 to 256 characters).")
    String secret;

    @Option(
        names = "--batch-size",
        paramLabel = "N",
        description = "A workflow's runs take batches of up to N messages (1 to 1000).")
    Integer batchSize;

    @Option(
        names = "--batch-timeout-ms",
        paramLabel = "MS",
        description = "A batch's run starts this long after its first message, however full.")
    Long batchTimeoutMs;

    @Option(
        names = "--batch-key",
        paramLabel = "PATH",
        description = "A JSON path into the message: one batch per value.")
    String batchKey;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object();
      if (target.queue != null) {
        body.put("type", "queue").put("name", target.queue);
      } else if (target.workflow != null) {
        body.put("type", "workflow").put("name", target.workflow);
      } else {
        body.put("type", target.url.startsWith("https:") ? "https" : "http").put("url", target.url);
      }
      if (secret != null) {
        body.put("secret", secret);
      }
      if (batchSize != null || batchTimeoutMs != null || batchKey != null) {
        ObjectNode batch = body.putObject("batch");
        if (batchSize != null) {
          batch.put("maxSize", batchSize);
        }
        if (batchTimeoutMs != null) {
          batch.put("timeoutMs", batchTimeoutMs);
        }
        if (batchKey != null) {
          batch.put("key", batchKey);
        }
      }
      return api.post(Api.path("v1", "topics", pattern, "subscriptions"), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("subscription " + answer.path("id").asLong() + ":");
      Cells.fields(answer, out);
    }
  }

  @Command(name = "unsubscribe", description = "Remove a subscription.")
  static final class Unsubscribe extends ApiCommand {
    @Parameters(index = "0", paramLabel = "PATTERN", description = "Its pattern.")
    String pattern;

    @Parameters(index = "1", paramLabel = "SUBSCRIPTION_ID", description = "Its id.")
    long id;

    @Override
    Answer request(Api api) {
      return api.delete(Api.path("v1", "topics", pattern, "subscriptions", id));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("subscription " + id + ": removed");
    }
  }

  @Command(name = "publish", description = "Publish a message to every matching subscription.")
  static final class Publish extends ApiCommand {
    @Parameters(
        index = "0",
        paramLabel = "TOPIC",
        description = "The topic, e.g. orders.eu.created.")
    String topic;

    @Parameters(
        index = "1",
        paramLabel = "BODY",
        converter = JsonArgument.class,
        description = "The message body, JSON.")
    JsonNode body;

    @Option(names = "--header", paramLabel = "NAME=VALUE", description = "A header (repeatable).")
    Map<String, String> headers;

    @Override
    Answer request(Api api) {
      ObjectNode message = Json.object();
      message.set("body", body);
      if (headers != null) {
        ObjectNode h = message.putObject("headers");
        headers.forEach(h::put);
      }
      return api.post(Api.path("v1", "topics", topic, "messages"), message);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("SUBSCRIPTION", "TYPE", "TARGET", "ID");
      for (JsonNode d : answer.path("deliveries")) {
        table.row(
            d.path("subscriptionId").asLong(),
            d.path("type").asText(),
            d.path("target").asText(),
            d.path("id").asLong());
      }
      if (table.isEmpty()) {
        out.println("no subscription matched");
      } else {
        table.print(out);
      }
    }
  }
}
