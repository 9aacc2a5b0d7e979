package dev.pgworkflows.workflows.internal.replay;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.Tasks;
import dev.pgworkflows.server.TestServer;
import dev.pgworkflows.workflows.WorkflowClient;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A task read by hand is the task data binding would make of the same JSON. */
class TaskTest {
  private static JsonNode json(String s) throws Exception {
    return Transport.JSON.readTree(s);
  }

  private static Task bound(JsonNode n) {
    return Transport.JSON.convertValue(n, Task.class);
  }

  @Test
  void everyShapeOfTheServersTaskReadsAsDataBindingReadsIt() throws Exception {
    List<String> shapes =
        List.of(
            // A first try: no journal rows, an object input.
            """
            {"runId":12,"messageId":40,"receipt":"9","attempt":1,"version":2,"reason":"start",
             "input":{"a":[1,2.5,"x"]},"journal":[],"startedAt":"2026-11-25T06:11:08.123456Z",
             "traceContext":"0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00f067aa0ba902b7"}
            """,
            // A resumed run: rows with outputs, an error, a timed-out wait, fields the SDK does
            // not read, a null input and a null trace.
            """
            {"runId":9007199254740993,"messageId":3,"receipt":"77","attempt":3,"version":1,
             "reason":"resume","input":null,"traceContext":null,"startedAt":"2026-01-01T00:00:00Z",
             "journal":[
               {"name":"a","kind":"run","output":"out","error":null,"timedOut":false,
                "attempts":1,"startedAt":"2026-01-01T00:00:01Z","completedAt":null},
               {"name":"b","kind":"run","output":null,"error":{"message":"no"},"timedOut":false},
               {"name":"c","kind":"wait","output":null,"error":null,"timedOut":true},
               {"name":"d","kind":"sleep"}
             ],
             "extra":{"ignored":true}}
            """,
            // Fields missing altogether.
            """
            {"runId":5,"receipt":"1"}
            """,
            // A null journal and a scalar input.
            """
            {"runId":6,"messageId":6,"receipt":"2","attempt":1,"version":1,"reason":"signal",
             "input":42,"journal":null,"startedAt":"2026-11-25T06:11:08Z"}
            """);
    for (String shape : shapes) {
      JsonNode n = json(shape);
      assertThat(Task.of(n)).as(shape).isEqualTo(bound(n));
    }
    Task resumed = Task.of(json(shapes.get(1)));
    assertThat(resumed.journal()).hasSize(4);
    assertThat(resumed.journal().get(0).output().asText()).isEqualTo("out");
    assertThat(resumed.journal().get(1).error().get("message").asText()).isEqualTo("no");
    assertThat(resumed.journal().get(2).timedOut()).isTrue();
    assertThat(resumed.journal().get(3).output()).isNull();
    assertThat(resumed.input().isNull()).isTrue();
    assertThat(resumed.runId()).isEqualTo(9007199254740993L);
    assertThat(Task.of(json(shapes.get(0))).startedAt())
        .isEqualTo(Instant.parse("2026-11-25T06:11:08.123456Z"));
  }

  /** The worker's reading of a task holds what the protocol's record of it holds. */
  private static void assertSameTask(Task read, dev.pgworkflows.protocol.Task wire)
      throws Exception {
    assertThat(read.runId()).isEqualTo(wire.runId());
    assertThat(read.messageId()).isEqualTo(wire.messageId());
    assertThat(read.receipt()).isEqualTo(wire.receipt());
    assertThat(read.attempt()).isEqualTo(wire.attempt());
    assertThat(read.version()).isEqualTo(wire.version());
    assertThat(read.reason()).isEqualTo(wire.reason());
    assertThat(read.startedAt()).isEqualTo(wire.startedAt());
    assertThat(read.traceContext()).isEqualTo(wire.traceContext());
    assertThat(read.input()).isEqualTo(Transport.JSON.readTree(wire.input()));
    assertThat(Transport.JSON.valueToTree(read.journal()).size())
        .isEqualTo(Transport.JSON.readTree(wire.journal()).size());
  }

  @Test
  void anAnswerWithoutTasksHoldsNone() throws Exception {
    assertThat(Task.all(null)).isEmpty();
    assertThat(Task.all(json("null"))).isEmpty();
    assertThat(Task.all(json("[]"))).isEmpty();
  }

  @Test
  void aRealPollsTasksReadAsDataBindingReadsThem() throws Exception {
    try (TestServer server = TestServer.start()) {
      WorkflowClient client = WorkflowClient.connect(server.url());
      client.start("read-back", Map.of("n", 1, "s", "ü"));
      client.start("read-back", List.of(1, 2));
      Transport transport = new Transport(server.url(), null);
      JsonNode answer =
          transport.post(
              "/v1/workflows/read-back/tasks/poll",
              Map.of("versions", List.of(1), "max", 2, "waitSeconds", 1));
      List<Task> read = Task.all(answer.get("tasks"));
      List<dev.pgworkflows.protocol.Task> wire = Transport.read(answer, Tasks.class).tasks();
      assertThat(read).hasSize(2);
      for (int i = 0; i < read.size(); i++) {
        assertThat(read.get(i)).isEqualTo(bound(answer.get("tasks").get(i)));
        assertSameTask(read.get(i), wire.get(i));
        assertThat(read.get(i).startedAt()).isNotNull();
        assertThat(read.get(i).receipt()).isNotBlank();
      }
    }
  }
}
