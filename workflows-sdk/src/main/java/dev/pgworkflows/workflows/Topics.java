package dev.pgworkflows.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.workflows.internal.http.Transport;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Topics ({@link WorkflowClient#topics()}): workflows subscribed to topic patterns, and publishing.
 * A published message starts a run of every workflow subscribed to a pattern its topic fits, in one
 * transaction, or joins a batch of a subscription that batches ({@link EventBatch}).
 */
public final class Topics {
  /**
   * Where a published message went: a run of a workflow ({@code type} {@code workflow}, {@code id}
   * the run), a batch ({@code batched}, {@code id} the message's place in it), a queue's message or
   * a webhook delivery.
   */
  public record Delivery(long subscriptionId, String type, String target, long id) {}

  private final Transport transport;

  Topics(Transport transport) {
    this.transport = transport;
  }

  /**
   * Subscribes {@code workflow} to {@code pattern} (dot-separated; {@code *} one segment, a final
   * {@code #} the rest): each message published on a topic it fits starts a run with the message's
   * body as input. Idempotent; answers the subscription's id. Needs scope {@code admin}.
   */
  public long subscribe(String pattern, String workflow) {
    return subscribe(pattern, workflow, null);
  }

  /**
   * As {@link #subscribe(String, String)}, the messages gathered in batches ({@code batch} null:
   * none), one run per batch. A subscription of the same pattern and workflow with other batch
   * settings is an {@link ApiException} 409.
   */
  public long subscribe(String pattern, String workflow, EventBatch batch) {
    Workflow.checkName(workflow);
    ObjectNode body =
        Transport.JSON.createObjectNode().put("type", "workflow").put("name", workflow);
    if (batch != null) {
      body.set("batch", Transport.JSON.valueToTree(batch.wire()));
    }
    return transport
        .send(
            "POST",
            "/v1/topics/" + URLEncoder.encode(pattern, StandardCharsets.UTF_8) + "/subscriptions",
            body,
            Duration.ofSeconds(30))
        .get("id")
        .asLong();
  }

  /** Publishes {@code body} on {@code topic}; answers where it went. Needs scope {@code start}. */
  public List<Delivery> publish(String topic, Object body) {
    ObjectNode message = Transport.JSON.createObjectNode();
    message.set("body", Transport.JSON.valueToTree(body));
    JsonNode answer =
        transport.send(
            "POST", "/v1/topics/" + topic + "/messages", message, Duration.ofSeconds(30));
    List<Delivery> out = new ArrayList<>();
    for (JsonNode d : answer.path("deliveries")) {
      out.add(
          new Delivery(
              d.path("subscriptionId").asLong(),
              d.path("type").asText(),
              d.path("target").asText(),
              d.path("id").asLong()));
    }
    return out;
  }
}
