package dev.pgworkflows.workflows.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.RunCount;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SearchAttribute;
import dev.pgworkflows.protocol.SearchAttributes;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchAnswers;
import dev.pgworkflows.protocol.StartBatchItem;
import dev.pgworkflows.protocol.StartBatchRequest;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.UpdateRequest;
import dev.pgworkflows.protocol.UpdateResult;
import dev.pgworkflows.protocol.UpdateWithStartRequest;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import dev.pgworkflows.workflows.internal.link.StartBatches;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A client's calls about runs as requests to the server; starts share requests ({@link Starts}).
 */
public final class HttpRunsLink implements RunsLink {
  private final Transport transport;
  private final StartBatches starts;

  public HttpRunsLink(Transport transport) {
    this.transport = transport;
    this.starts =
        new StartBatches(
            new StartBatches.Sender() {
              @Override
              public StartResult one(String workflow, StartRequest body) {
                return transport.post(
                    "/v1/workflows/" + workflow + "/runs", body, StartResult.class);
              }

              @Override
              public List<StartAnswer> many(String workflow, List<StartBatchItem> items) {
                return transport
                    .post(
                        "/v1/workflows/" + workflow + "/runs/batch",
                        new StartBatchRequest(items),
                        StartBatchAnswers.class)
                    .runs();
              }
            });
  }

  private static String run(String workflow, long runId) {
    return "/v1/workflows/" + workflow + "/runs/" + runId;
  }

  @Override
  public StartResult start(String workflow, StartRequest body) {
    return starts.start(workflow, body);
  }

  @Override
  public SignalOutcome signal(
      String workflow, long runId, String event, JsonNode payload, String key) {
    String path =
        run(workflow, runId) + "/signals/" + URLEncoder.encode(event, StandardCharsets.UTF_8);
    return key == null
        ? transport.post(path, payload, SignalOutcome.class)
        : transport.post(path, payload, "Idempotency-Key", key, SignalOutcome.class);
  }

  @Override
  public UpdateResult update(
      String workflow, long runId, String update, JsonNode input, String key, int waitSeconds) {
    return transport.post(
        run(workflow, runId) + "/updates/" + URLEncoder.encode(update, StandardCharsets.UTF_8),
        new UpdateRequest(input, waitSeconds),
        "Idempotency-Key",
        key,
        Duration.ofSeconds(waitSeconds + 30L),
        UpdateResult.class);
  }

  @Override
  public UpdateResult updateWithStart(
      String workflow,
      StartRequest start,
      String update,
      JsonNode input,
      String key,
      int waitSeconds) {
    return transport.post(
        "/v1/workflows/" + workflow + "/update-with-start",
        new UpdateWithStartRequest(start, update, input, waitSeconds),
        "Idempotency-Key",
        key,
        Duration.ofSeconds(waitSeconds + 30L),
        UpdateResult.class);
  }

  @Override
  public Run get(String workflow, long runId) {
    return transport.get(run(workflow, runId), Run.class);
  }

  @Override
  public Run chainLast(String workflow, long runId) {
    return transport.get(run(workflow, runId) + "/chain/last", Run.class);
  }

  @Override
  public CancelOutcome cancel(String workflow, long runId) {
    return transport.delete(run(workflow, runId), CancelOutcome.class);
  }

  @Override
  public RunPage search(String query, String cursor, int limit) {
    StringBuilder q = new StringBuilder("/v1/runs?limit=").append(limit);
    if (query != null) {
      q.append("&query=").append(URLEncoder.encode(query, StandardCharsets.UTF_8));
    }
    if (cursor != null) {
      q.append("&cursor=").append(URLEncoder.encode(cursor, StandardCharsets.UTF_8));
    }
    return transport.get(q.toString(), RunPage.class);
  }

  @Override
  public long count(String query) {
    String q = query == null ? "" : "?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8);
    return transport.get("/v1/runs/count" + q, RunCount.class).count();
  }

  @Override
  public SearchAttribute defineAttribute(String name, String type) {
    return transport.put(
        "/v1/search-attributes/" + URLEncoder.encode(name, StandardCharsets.UTF_8),
        Map.of("type", type),
        SearchAttribute.class);
  }

  @Override
  public List<SearchAttribute> searchAttributes() {
    return transport.get("/v1/search-attributes", SearchAttributes.class).attributes();
  }

  @Override
  public RunAttributes attributes(String workflow, long runId) {
    return transport.get(run(workflow, runId) + "/attributes", RunAttributes.class);
  }

  @Override
  public RunAttributes setAttributes(String workflow, long runId, JsonNode attributes) {
    return transport.put(
        run(workflow, runId) + "/attributes",
        new RunAttributes(null, attributes.toString()),
        RunAttributes.class);
  }
}
