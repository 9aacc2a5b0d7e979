package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code pgw queues}: queues, their messages, dead letters, paused groups and parked messages. */
@Command(
    name = "queues",
    description = "Queues with their numbers (also: queues list), messages and dead letters.",
    synopsisSubcommandLabel = "[COMMAND]",
    subcommands = {
      QueuesCommand.List.class,
      QueuesCommand.Create.class,
      QueuesCommand.Get.class,
      QueuesCommand.Drop.class,
      MessageCommands.Send.class,
      MessageCommands.Receive.class,
      MessageCommands.DeleteMessage.class,
      MessageCommands.DeadLetters.class,
      MessageCommands.Redrive.class,
      MessageCommands.Purge.class,
      GroupCommands.PauseGroup.class,
      GroupCommands.ResumeGroup.class,
      GroupCommands.Park.class,
      GroupCommands.Parked.class,
      GroupCommands.RedriveParked.class
    })
final class QueuesCommand extends ApiCommand {
  @Override
  Answer request(Api api) {
    return api.get("/v1/queues");
  }

  @Override
  void show(JsonNode answer, PrintWriter out) {
    QueueShows.queues(answer.path("queues"), out);
  }

  /** A command about one queue, its first argument. */
  abstract static class OnQueue extends ApiCommand {
    @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue.")
    String queue;

    String path(Object... rest) {
      Object[] segments = new Object[3 + rest.length];
      segments[0] = "v1";
      segments[1] = "queues";
      segments[2] = queue;
      System.arraycopy(rest, 0, segments, 3, rest.length);
      return Api.path(segments);
    }
  }

  @Command(name = "list", description = "Every queue with its numbers.")
  static final class List extends ApiCommand {
    @Override
    Answer request(Api api) {
      return api.get("/v1/queues");
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      QueueShows.queues(answer.path("queues"), out);
    }
  }

  @Command(
      name = "create",
      description = "Create a queue (again with the same settings: nothing changes).")
  static final class Create extends OnQueue {
    @Option(names = "--fifo", description = "One message per group in flight, oldest first.")
    boolean fifo;

    @Option(
        names = "--visibility-timeout",
        paramLabel = "SECONDS",
        description = "How long a received message stays invisible (default 30).")
    Integer visibilityTimeout;

    @Option(
        names = "--max-receives",
        paramLabel = "N",
        description = "Receives after which a message is dead-lettered (default: unlimited).")
    Integer maxReceives;

    @Override
    Answer request(Api api) {
      ObjectNode body = Json.object().put("fifo", fifo);
      if (visibilityTimeout != null) {
        body.put("visibilityTimeoutSeconds", visibilityTimeout);
      }
      if (maxReceives != null) {
        body.put("maxReceives", maxReceives);
      }
      return api.put(path(), body);
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      QueueShows.queues(java.util.List.of(answer), out);
    }
  }

  @Command(name = "get", description = "One queue with its numbers.")
  static final class Get extends OnQueue {
    @Override
    Answer request(Api api) {
      return api.get(path());
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      QueueShows.queues(java.util.List.of(answer), out);
    }
  }

  @Command(name = "drop", description = "Drop a queue with its messages and dead letters.")
  static final class Drop extends OnQueue {
    @Override
    Answer request(Api api) {
      return api.delete(path());
    }

    @Override
    void show(JsonNode answer, PrintWriter out) {
      out.println(queue + ": dropped");
    }
  }
}
