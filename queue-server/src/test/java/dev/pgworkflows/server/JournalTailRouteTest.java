package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Over HTTP, a poll with {@code journalMax} withholds a longer journal, and {@code journal-tail}
 * answers the rows after the one the worker names, or the whole journal; every exchange is checked
 * against openapi.yaml, and bad input is refused naming the field.
 */
class JournalTailRouteTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static JsonNode poll(int journalMax) {
    JsonNode tasks =
        api.post(
                "/v1/workflows/tail/tasks/poll",
                Map.of("versions", List.of(1), "waitSeconds", 5, "journalMax", journalMax))
            .json()
            .get("tasks");
    assertThat(tasks).hasSize(1);
    return tasks.get(0);
  }

  @Test
  void aWithheldJournalIsReadFromTheRowAfterTheOneHeld() {
    long run = api.post("/v1/workflows/tail/runs", Map.of("input", 1)).json().get("runId").asLong();
    JsonNode task = poll(5);
    assertThat(task.get("journal")).isEmpty();
    // Three steps journaled, then the run sleeps a moment and comes back.
    String steps = "/v1/workflows/tail/runs/" + run;
    assertThat(
            api.post(
                    steps + "/steps",
                    Map.of(
                        "messageId", task.get("messageId").asLong(),
                        "receipt", task.get("receipt").asText(),
                        "steps",
                            List.of(
                                Map.of("name", "a", "kind", "run", "output", 1),
                                Map.of("name", "b", "kind", "run", "output", 2),
                                Map.of("name", "c", "kind", "run", "output", 3))))
                .status())
        .isEqualTo(200);
    api.post(
        steps + "/complete",
        Map.of(
            "messageId", task.get("messageId").asLong(),
            "receipt", task.get("receipt").asText(),
            "next", Map.of("delayMs", 1)));

    JsonNode again = poll(2);
    assertThat(again.get("journal").isNull()).as("three rows are more than 2").isTrue();

    JsonNode whole = api.get(steps + "/journal-tail").json();
    assertThat(whole.get("whole").asBoolean()).isTrue();
    assertThat(whole.get("journal"))
        .extracting(r -> r.get("name").asText())
        .containsExactly("a", "b", "c");
    assertThat(whole.get("lastSeq").asInt()).isEqualTo(3);

    JsonNode first =
        api.get(
                steps
                    + "/journal-tail?afterSeq=3&afterCompletedAt="
                    + whole.get("lastCompletedAt").asText())
            .json();
    assertThat(first.get("whole").asBoolean()).isFalse();
    assertThat(first.get("journal")).isEmpty();

    assertThat(api.get(steps + "/journal-tail?afterSeq=3").status()).isEqualTo(400);
    assertThat(
            api.get(steps + "/journal-tail?afterSeq=x&afterCompletedAt=2026-01-01T00:00:00Z")
                .status())
        .isEqualTo(400);
    assertThat(api.get(steps + "/journal-tail?afterSeq=1&afterCompletedAt=yesterday").status())
        .isEqualTo(400);
    assertThat(
            api.post(
                    "/v1/workflows/tail/tasks/poll",
                    Map.of("versions", List.of(1), "journalMax", -1))
                .status())
        .isEqualTo(400);
  }
}
