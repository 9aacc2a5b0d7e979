package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A body the server cannot read is a 400 whose detail says which field is wrong (its path in the
 * body, as {@code messages[1].delaySeconds}) and what it should be, in plain words: never a Java
 * class, a package or a Jackson setting.
 */
class ErrorDetailsNameTheFieldInPlainWordsTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  /** Words of Java and Jackson that a detail must not show. */
  private static final List<String> INTERNALS =
      List.of(
          "java.",
          "$",
          "dev.pgworkflows",
          "com.fasterxml",
          "jackson",
          "`",
          "Feature",
          "Exception",
          "Source:",
          "REDACTED");

  /** A class name: a capitalised word with a capital inside (CompletionBatch, ObjectNode). */
  private static final Pattern CLASS_NAME = Pattern.compile("\\b(?!NaN\\b)[A-Z][a-z0-9]+[A-Z]\\w*");

  /** Java's type names, as words. */
  private static final Pattern TYPE_NAME =
      Pattern.compile(
          "\\b(Long|Integer|Double|Boolean|String|Instant|List|Map|Object|int|long)\\b");

  @BeforeAll
  static void aQueueToSendTo() {
    api.put("/v1/queues/plain", null);
  }

  static Stream<Arguments> badBodies() {
    String deep = "{\"body\":" + "[".repeat(500) + "]".repeat(500) + "}";
    return Stream.of(
        // queues
        bad("PUT", "/v1/queues/plain", "{\"fifo\": \"yes\"}", "fifo", "true or false"),
        bad(
            "PUT",
            "/v1/queues/plain",
            "{\"visibilityTimeoutSeconds\": 1.5}",
            "visibilityTimeoutSeconds",
            "a whole number"),
        bad(
            "PUT",
            "/v1/queues/plain",
            "{\"maxReceives\": 99999999999}",
            "maxReceives",
            "a whole number from"),
        bad("PUT", "/v1/queues/plain", "{\"surprise\": 1}", "surprise", "maxReceives"),
        bad("PUT", "/v1/queues/plain", "[1]", null, "must be an object"),
        // messages
        bad(
            "POST",
            "/v1/queues/plain/messages",
            "{\"body\": 1, \"headers\": \"nope\"}",
            "headers",
            "an object"),
        bad(
            "POST",
            "/v1/queues/plain/messages",
            "{\"body\": 1, \"delaySeconds\": \"soon\"}",
            "delaySeconds",
            "a whole number"),
        bad(
            "POST",
            "/v1/queues/plain/messages",
            "{\"messages\": [{\"body\": 1}, {\"body\": 2, \"delaySeconds\": true}]}",
            "messages[1].delaySeconds",
            "a whole number"),
        bad("POST", "/v1/queues/plain/messages", "{\"messages\": 5}", "messages", "an array"),
        bad(
            "POST",
            "/v1/queues/plain/messages",
            "{\"body\": 1, \"delaySeconds\": NaN}",
            "delaySeconds",
            "not JSON numbers"),
        bad(
            "POST",
            "/v1/queues/plain/messages",
            "{\"body\": {\"a\": 1, \"a\": 2}}",
            "body.a",
            "appears twice"),
        bad("POST", "/v1/queues/plain/messages", "{not json", null, "line 1, column 2"),
        bad("POST", "/v1/queues/plain/messages", "{\"body\": \"open", null, "malformed JSON"),
        bad("POST", "/v1/queues/plain/messages", "{\"body\": 1} {}", null, "one JSON value"),
        bad("POST", "/v1/queues/plain/messages", deep, null, "deeper than 200"),
        bad(
            "POST",
            "/v1/queues/plain/messages",
            "{\"body\": 1, \"delaySeconds\": 1" + "0".repeat(1200) + "}",
            null,
            "too many digits"),
        bad(
            "POST",
            "/v1/queues/plain/messages/receive",
            "{\"max\": \"ten\"}",
            "max",
            "a whole number"),
        bad("POST", "/v1/queues/plain/messages/receive", "{\"match\": [1]}", "match", "an object"),
        bad(
            "POST",
            "/v1/queues/plain/messages/delete",
            "{\"ids\": [1, \"two\"]}",
            "ids[1]",
            "a whole number"),
        bad(
            "POST",
            "/v1/queues/plain/messages/1/visibility",
            "{\"visibilityTimeoutSeconds\": {}}",
            "visibilityTimeoutSeconds",
            "a whole number"),
        // topics
        bad(
            "POST",
            "/v1/topics/orders.*/subscriptions",
            "{\"type\": [\"queue\"], \"name\": \"plain\"}",
            "type",
            "a string"),
        bad(
            "POST",
            "/v1/topics/orders.eu/messages",
            "{\"body\": 1, \"headers\": [1]}",
            "headers",
            "an object"),
        // starts
        bad("POST", "/v1/workflows/wf/runs", "{\"version\": \"one\"}", "version", "a whole number"),
        bad(
            "POST",
            "/v1/workflows/wf/runs",
            "{\"idempotencyKey\": {\"k\": 1}}",
            "idempotencyKey",
            "a string"),
        bad(
            "POST",
            "/v1/workflows/wf/runs/batch",
            "{\"runs\": [{\"input\": 1}, {\"input\": 2, \"retentionDays\": \"x\"}]}",
            "runs[1].retentionDays",
            "a whole number"),
        // the worker protocol
        bad("POST", "/v1/workflows/wf/tasks/poll", "{\"versions\": \"1\"}", "versions", "an array"),
        bad(
            "POST",
            "/v1/workflows/wf/runs/1/complete",
            "{\"messageId\": \"x\", \"receipt\": \"1\", \"next\": {}}",
            "messageId",
            "a whole number"),
        bad(
            "POST",
            "/v1/workflows/wf/runs/1/complete",
            "{\"messageId\": 1, \"receipt\": \"1\", \"step\": {\"name\": \"a\", \"kind\": \"run\","
                + " \"startedAt\": \"yesterday\"}, \"next\": {}}",
            "step.startedAt",
            "an RFC 3339 date-time string"),
        bad(
            "POST",
            "/v1/workflows/wf/runs/1/complete",
            "{\"messageId\": 1, \"receipt\": \"1\", \"next\": {\"wait\": {\"step\": \"w\","
                + " \"event\": \"e\", \"colour\": 1}}}",
            "next.wait.colour",
            "event, match, step"),
        bad(
            "POST",
            "/v1/workflows/wf/tasks/complete",
            "{\"completions\": 5}",
            "completions",
            "an array"),
        bad(
            "POST",
            "/v1/workflows/wf/tasks/complete",
            "{\"completions\": [{\"runId\": 1, \"messageId\": 1, \"receipt\": \"1\"}],"
                + " \"take\": {\"versions\": [1.5]}}",
            "take.versions[0]",
            "a whole number"),
        bad(
            "POST",
            "/v1/workflows/wf/runs/1/retry",
            "{\"messageId\": 1, \"receipt\": \"1\", \"delayMs\": \"soon\"}",
            "delayMs",
            "a whole number"),
        bad(
            "POST",
            "/v1/workflows/wf/runs/1/lease",
            "{\"messageId\": 1, \"receipt\": \"1\", \"leaseSeconds\": false}",
            "leaseSeconds",
            "a whole number"),
        // signals: any JSON is a payload, only what is not JSON is refused
        bad(
            "POST",
            "/v1/workflows/wf/runs/1/signals/paid",
            "{\"amount\": 1, \"amount\": 2}",
            "amount",
            "appears twice"),
        bad("POST", "/v1/workflows/wf/runs/1/signals/paid", "{\"amount\": }", null, "line 1"));
  }

  private static Arguments bad(
      String method, String path, String body, String field, String shouldBe) {
    return Arguments.of(method, path, body, field, shouldBe);
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("badBodies")
  void aBodyThatDoesNotFitIsRefusedNamingTheFieldAndWhatItShouldBe(
      String method, String path, String body, String field, String shouldBe) {
    Api.Response r = api.send(method, path, body, java.util.Map.of());
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.isProblem()).as(r.body()).isTrue();
    String detail = r.json().get("detail").asText();
    assertThat(detail).contains(shouldBe);
    assertThat(detail).doesNotContain(INTERNALS);
    assertThat(CLASS_NAME.matcher(detail).find()).as("a class name in: %s", detail).isFalse();
    assertThat(TYPE_NAME.matcher(detail).find()).as("a Java type in: %s", detail).isFalse();
    if (field != null) {
      assertThat(detail).as("the detail names the field").contains(field);
      assertThat(r.json().get("field").asText()).isEqualTo(field);
    }
  }
}
