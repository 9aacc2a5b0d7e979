package dev.pgworkflows.workflows.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * A client's calls about runs as requests to the server; starts share requests ({@link Starts}).
 */
public final class HttpRunsLink implements RunsLink {
  private final Transport transport;
  private final Starts starts;

  public HttpRunsLink(Transport transport) {
    this.transport = transport;
    this.starts = new Starts(transport);
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
}
