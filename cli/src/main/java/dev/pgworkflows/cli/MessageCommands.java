package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The queue commands about messages: send, receive, delete, dead letters, purge. */
final class MessageCommands {
  private MessageCommands() {}

  @Command(name = "send", description = "Send a message (to __wf_<workflow>: start a run).")
  static final class Send extends QueuesCommand.OnQueue {
    @Parameters(
        index = "1",
        paramLabel = "BODY",
        converter = JsonArgument.class,
        description = "The message body, JSON.")
    JsonNode body;

    @Option(names = "--group", paramLabel = "GROUP", description = "The FIFO group.")
    String group;

    @Option(names = "--delay", paramLabel = "SECONDS", description = "Visible after this long.")
    Integer delay;

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
      if (delay != null) {
        message.put("delaySeconds", delay);
      }
      if (group != null) {
        message.put("groupId", group);
      }
      return api.post(path("messages"), message);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      for (JsonNode id : answer.path("ids")) {
        out.println("sent: message " + id.asLong());
      }
    }
  }

  @Command(
      name = "receive",
      description = "Receive messages; they stay invisible for the visibility timeout.")
  static final class Receive extends QueuesCommand.OnQueue {
    @Option(names = "--max", paramLabel = "N", description = "At most this many (default 1).")
    Integer max;

    @Option(
        names = "--wait",
        paramLabel = "SECONDS",
        description = "Wait up to this long for one (0 to 30, default 0).")
    Integer wait;

    @Option(
        names = "--visibility-timeout",
        paramLabel = "SECONDS",
        description = "Invisible this long (default: the queue's).")
    Integer visibilityTimeout;

    @Option(
        names = "--match",
        paramLabel = "JSON",
        converter = JsonArgument.class,
        description = "Only messages whose body contains this document.")
    JsonNode match;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object();
      if (max != null) {
        body.put("max", max);
      }
      if (wait != null) {
        body.put("waitSeconds", wait);
      }
      if (visibilityTimeout != null) {
        body.put("visibilityTimeoutSeconds", visibilityTimeout);
      }
      if (match != null) {
        body.set("match", match);
      }
      return api.post(path("messages", "receive"), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      QueueShows.messages(answer.path("messages"), out);
    }
  }

  @Command(name = "delete-message", description = "Delete (acknowledge) a message.")
  static final class DeleteMessage extends QueuesCommand.OnQueue {
    @Parameters(index = "1", paramLabel = "MESSAGE_ID", description = "The message.")
    long id;

    @Override
    Answer request(Api api) {
      return api.delete(path("messages", id));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("message " + id + ": deleted");
    }
  }

  @Command(name = "dead-letters", description = "A queue's dead letters, oldest first.")
  static final class DeadLetters extends QueuesCommand.OnQueue {
    @Option(names = "--after", paramLabel = "DEAD_ID", description = "The page after this one.")
    Long after;

    @Option(names = "--limit", paramLabel = "N", description = "Per page (default 100).")
    Integer limit;

    @Override
    Answer request(Api api) {
      var params = Api.params();
      params.put("limit", limit);
      params.put("after", after);
      return api.get(path("dead-letters") + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      QueueShows.deadLetters(answer, out);
    }
  }

  @Command(
      name = "redrive",
      description = "Send dead letters back to the queue: these, or all without DEAD_IDs.")
  static final class Redrive extends QueuesCommand.OnQueue {
    @Parameters(index = "1..*", paramLabel = "DEAD_ID", description = "Dead letters to send back.")
    java.util.List<Long> ids;

    @Override
    Answer request(Api api) {
      ObjectNode body = null;
      if (ids != null && !ids.isEmpty()) {
        body = Json.object();
        ArrayNode list = body.putArray("ids");
        ids.forEach(list::add);
      }
      return api.post(path("dead-letters", "redrive"), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("redriven: " + answer.path("redriven").asLong());
    }
  }

  @Command(name = "purge", description = "Delete every message of a queue (not its dead letters).")
  static final class Purge extends QueuesCommand.OnQueue {
    @Override
    Answer request(Api api) {
      return api.post(path("purge"), null);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println("purged: " + answer.path("purged").asLong());
    }
  }
}
