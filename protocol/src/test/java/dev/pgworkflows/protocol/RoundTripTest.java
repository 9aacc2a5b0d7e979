package dev.pgworkflows.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import org.junit.jupiter.api.Test;

/**
 * The records read what the server writes and write it back byte for byte: field names, order,
 * omitted nulls, raw JSON and instants as openapi.yaml shows them.
 */
class RoundTripTest {
  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .build();

  private static <T> void roundTrips(String json, Class<T> type) throws Exception {
    T value = JSON.readValue(json, type);
    assertThat(JSON.writeValueAsString(value)).isEqualTo(json);
  }

  @Test
  void aTaskKeepsItsInputAndJournalAsTheyCame() throws Exception {
    String task =
        "{\"runId\":42,\"messageId\":17,\"receipt\":\"1795333842276857\",\"attempt\":1,"
            + "\"version\":2,\"reason\":\"start\",\"input\":{\"email\":\"a@b.c\",\"n\":[1,2.5]},"
            + "\"journal\":[{\"name\":\"a\",\"kind\":\"run\",\"output\":null}],"
            + "\"startedAt\":\"2026-11-22T07:50:16.123456Z\",\"traceContext\":null}";
    roundTrips(task, Task.class);
    roundTrips("{\"tasks\":[" + task + "]}", Tasks.class);
    Task read = JSON.readValue(task, Task.class);
    assertThat(read.input()).isEqualTo("{\"email\":\"a@b.c\",\"n\":[1,2.5]}");
    roundTrips(task.replace("{\"email\":\"a@b.c\",\"n\":[1,2.5]}", "null"), Task.class);
    roundTrips(task.replace("{\"email\":\"a@b.c\",\"n\":[1,2.5]}", "\"text\""), Task.class);
  }

  @Test
  void completionsKeepTheirShape() throws Exception {
    roundTrips(
        "{\"completions\":[{\"runId\":42,\"messageId\":17,\"receipt\":\"1\","
            + "\"step\":{\"name\":\"s\",\"kind\":\"sleep\",\"output\":null,\"error\":null,"
            + "\"startedAt\":\"2026-11-22T07:50:16Z\"},"
            + "\"next\":{\"delayMs\":5000,\"wait\":{\"step\":\"v\",\"event\":\"e\","
            + "\"match\":{\"userId\":42}},\"until\":\"2026-11-22T07:50:21Z\"},"
            + "\"result\":null,\"leaseSeconds\":60,\"stepSeconds\":0.012,\"traceparent\":null}],"
            + "\"take\":{\"versions\":[1,2],\"max\":4,\"leaseSeconds\":null,\"journalMax\":32}}",
        CompletionBatch.class);
    roundTrips(
        "{\"messageId\":17,\"receipt\":\"1\",\"step\":null,\"next\":null,"
            + "\"result\":{\"status\":\"failed\",\"error\":{\"message\":\"boom\"}},"
            + "\"leaseSeconds\":null,\"stepSeconds\":null}",
        CompleteRequest.class);
  }

  @Test
  void outcomesOmitWhatTheyLack() throws Exception {
    roundTrips(
        "{\"results\":[{\"outcome\":\"ok\",\"messageId\":17,\"receipt\":\"9\"},"
            + "{\"outcome\":\"stale\"},"
            + "{\"outcome\":\"rejected\",\"status\":400,\"detail\":\"receipt is required\"}]}",
        CompletionAnswers.class);
    assertThat(JSON.writeValueAsString(CompletionOutcome.rejected(404, "gone")))
        .isEqualTo("{\"outcome\":\"rejected\",\"status\":404,\"detail\":\"gone\"}");
    roundTrips("{\"outcome\":\"ok\"}", RetryOutcome.class);
    roundTrips("{\"receipt\":\"12\"}", LeaseExtended.class);
  }

  @Test
  void startAnswersAreToldApartByTheirFields() throws Exception {
    String json =
        "{\"runs\":[{\"runId\":7,\"status\":\"running\",\"created\":true},"
            + "{\"outcome\":\"rejected\",\"status\":400,\"detail\":\"bad\"}]}";
    roundTrips(json, StartBatchAnswers.class);
    StartBatchAnswers read = JSON.readValue(json, StartBatchAnswers.class);
    assertThat(read.runs())
        .containsExactly(new StartResult(7, "running", true), Rejected.of(400, "bad"));
    assertThat(JSON.writeValueAsString(new StartResult(7, "running", false)))
        .isEqualTo("{\"runId\":7,\"status\":\"running\",\"created\":false}");
  }

  @Test
  void aRunOmitsItsAbsentFieldsButKeepsAJsonNull() throws Exception {
    roundTrips(
        "{\"runId\":7,\"workflow\":\"onboard\",\"version\":1,\"status\":\"running\","
            + "\"input\":null,\"retentionDays\":30,"
            + "\"waitingFor\":{\"step\":\"v\",\"event\":\"verify\",\"match\":{\"id\":1}},"
            + "\"startedAt\":\"2026-11-22T07:50:16Z\",\"paused\":false}",
        Run.class);
    roundTrips(
        "{\"runs\":[{\"runId\":7,\"workflow\":\"w\",\"version\":1,\"status\":\"completed\","
            + "\"input\":1,\"output\":[true],\"retentionDays\":30,"
            + "\"startedAt\":\"2026-11-22T07:50:16Z\",\"completedAt\":\"2026-11-22T07:50:17Z\",\"paused\":false}],"
            + "\"nextCursor\":\"7\"}",
        RunPage.class);
  }

  @Test
  void aJournalTailKeepsItsRowsAsTheyCame() throws Exception {
    roundTrips(
        "{\"whole\":false,\"journal\":[{\"name\":\"a\",\"kind\":\"run\",\"output\":1}],"
            + "\"lastSeq\":7,\"lastCompletedAt\":\"2026-12-06T17:40:01.123456Z\"}",
        JournalTail.class);
  }

  @Test
  void aProblemOmitsItsAbsentFields() throws Exception {
    roundTrips(
        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
            + "\"detail\":\"queue name must be 1 to 48 characters\",\"field\":\"queue\"}",
        Problem.class);
  }

  @Test
  void requestsRead() throws Exception {
    roundTrips(
        "{\"versions\":[1],\"max\":5,\"waitSeconds\":20,\"leaseSeconds\":null,\"journalMax\":null}",
        PollRequest.class);
    roundTrips(
        "{\"versions\":[1],\"slots\":32,\"seconds\":30,\"leaseSeconds\":60,\"journalMax\":32}",
        StreamRequest.class);
    roundTrips(
        "{\"runs\":[{\"input\":{\"a\":1},\"version\":null,\"idempotencyKey\":\"k\","
            + "\"retentionDays\":null,\"traceparent\":null}]}",
        StartBatchRequest.class);
    roundTrips(
        "{\"messageId\":1,\"receipt\":\"2\",\"delayMs\":0,\"step\":\"s\"}", RetryRequest.class);
  }
}
