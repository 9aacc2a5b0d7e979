package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The queue commands about FIFO groups: pausing one, parking its head, redriving it. */
final class GroupCommands {
  private GroupCommands() {}

  /** A command about one group of a queue: QUEUE GROUP. */
  abstract static class OnGroup extends QueuesCommand.OnQueue {
    @Parameters(index = "1", paramLabel = "GROUP", description = "The FIFO group.")
    String group;
  }

  /** Pausing or resuming a group: both answer its state. */
  abstract static class Switch extends OnGroup {
    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(
          answer.path("queue").asText(queue)
              + " group "
              + answer.path("group").asText(group)
              + ": "
              + (answer.path("paused").asBoolean() ? "paused" : "not paused"));
    }
  }

  @Command(
      name = "pause-group",
      description = "Hand out none of a group's messages until it is resumed.")
  static final class PauseGroup extends Switch {
    @Override
    Answer request(Api api) {
      return api.post(path("groups", group, "pause"), null);
    }
  }

  @Command(name = "resume-group", description = "Hand out a group's messages again.")
  static final class ResumeGroup extends Switch {
    @Override
    Answer request(Api api) {
      return api.post(path("groups", group, "resume"), null);
    }
  }

  @Command(
      name = "park",
      description = "Set a group's head message aside, so the messages behind it move on.")
  static final class Park extends OnGroup {
    @Override
    Answer request(Api api) {
      return api.post(path("groups", group, "park"), null);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(
          "parked "
              + answer.path("id").asLong()
              + ": message "
              + answer.path("messageId").asLong()
              + " of group "
              + answer.path("groupId").asText(group));
    }
  }

  @Command(name = "parked", description = "A queue's parked messages, oldest parked first.")
  static final class Parked extends QueuesCommand.OnQueue {
    @Option(names = "--after", paramLabel = "PARKED_ID", description = "The page after this one.")
    Long after;

    @Option(names = "--limit", paramLabel = "N", description = "Per page (default 100).")
    Integer limit;

    @Override
    Answer request(Api api) {
      var params = Api.params();
      params.put("limit", limit);
      params.put("after", after);
      return api.get(path("parked") + Api.query(params));
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      Table table = new Table("PARKED ID", "MESSAGE", "GROUP", "READS", "PARKED AT", "BODY");
      for (JsonNode m : answer.path("messages")) {
        table.row(
            m.path("id").asLong(),
            m.path("messageId").asLong(),
            Cells.cell(m.path("groupId")),
            m.path("readCount").asInt(),
            Cells.cell(m.path("parkedAt")),
            Cells.cell(m.path("body")));
      }
      table.print(out);
      if (answer.hasNonNull("next")) {
        out.println("more: --after " + answer.get("next").asText());
      }
    }
  }

  @Command(
      name = "redrive-parked",
      description = "Put a parked message back, the newest of its group.")
  static final class RedriveParked extends QueuesCommand.OnQueue {
    @Parameters(index = "1", paramLabel = "PARKED_ID", description = "The parked message.")
    long id;

    @Override
    Answer request(Api api) {
      return api.post(path("parked", id, "redrive"), null);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(
          "parked " + id + ": back in the queue as message " + answer.path("messageId").asLong());
    }
  }
}
