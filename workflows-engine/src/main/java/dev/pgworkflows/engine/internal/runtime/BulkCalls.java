package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.search.RunQuery;
import dev.pgworkflows.engine.internal.store.BulkStore;
import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.protocol.BulkOperation;
import dev.pgworkflows.protocol.BulkOperations;
import dev.pgworkflows.protocol.BulkRequest;
import dev.pgworkflows.protocol.BulkRuns;
import java.util.List;
import java.util.Set;

/**
 * Bulk operations: an operator's action on every run a query selects, made by the leading server a
 * page a second ({@code BulkRunner}). A request is checked here and in the database; a refusal is a
 * 400 naming the field and makes no job.
 */
public final class BulkCalls {
  /** Runs per second when the request names no rate. */
  public static final int DEFAULT_RATE = 100;

  private static final Set<String> OUTCOMES = Set.of("done", "skipped", "failed");

  private final BulkStore store;

  public BulkCalls(BulkStore store) {
    this.store = store;
  }

  /** Makes a job of {@code request} on behalf of {@code actor} (a token's name, or null). */
  public BulkOperation create(BulkRequest request, String actor) {
    if (request == null || request.action() == null) {
      throw ApiException.badRequest(
          "action", "action is required: cancel, signal, pause, resume or restart");
    }
    if (request.query() == null || request.query().isBlank()) {
      throw ApiException.badRequest(
          "query", "query is required: the runs to act on, e.g. status = 'failed'");
    }
    JsonNode tree = RunQuery.parse(request.query());
    ObjectNode params = Json.MAPPER.createObjectNode();
    if (request.event() != null) {
      params.put("event", request.event());
    }
    if (request.payload() != null) {
      params.set("payload", request.payload());
    }
    if (request.fromStep() != null) {
      params.put("fromStep", request.fromStep());
    }
    int rate = request.ratePerSecond() == null ? DEFAULT_RATE : request.ratePerSecond();
    try {
      return store.create(
          request.action(),
          request.query(),
          tree,
          params.toString(),
          rate,
          Boolean.TRUE.equals(request.confirm()),
          actor);
    } catch (DatabaseException e) {
      throw refusal(e);
    }
  }

  public BulkOperation get(long batchId) {
    return store
        .get(batchId)
        .orElseThrow(() -> ApiException.notFound("batch " + batchId + " not found"));
  }

  public BulkOperations list(Long before, int limit) {
    List<BulkOperation> page = store.list(before, limit);
    String next = page.size() == limit ? Long.toString(page.get(page.size() - 1).batchId()) : null;
    return new BulkOperations(page, next);
  }

  /** Cancels a running job: it acts on no further run. A job that ended is answered as it is. */
  public BulkOperation cancel(long batchId) {
    return store
        .cancel(batchId)
        .orElseThrow(() -> ApiException.notFound("batch " + batchId + " not found"));
  }

  public BulkRuns runs(long batchId, String outcome, Long before, int limit) {
    if (outcome != null && !OUTCOMES.contains(outcome)) {
      throw ApiException.badRequest("outcome", "outcome must be done, skipped or failed");
    }
    get(batchId);
    List<BulkRuns.Outcome> page = store.runs(batchId, outcome, before, limit);
    String next = page.size() == limit ? Long.toString(page.get(page.size() - 1).runId()) : null;
    return new BulkRuns(batchId, page, next);
  }

  /**
   * The database's refusal as a 400 naming the field its message begins with (action, query,
   * ratePerSecond, event, fromStep, confirm); anything else as it came.
   */
  private static RuntimeException refusal(DatabaseException e) {
    if (!"22023".equals(e.sqlState())) {
      return e;
    }
    String message = e.serverMessage();
    String first = message.split("[ :]", 2)[0];
    String field =
        switch (first) {
          case "action", "ratePerSecond", "event", "confirm", "fromStep" -> first;
          case "step" -> "fromStep";
          default -> "query";
        };
    return ApiException.badRequest(field, message);
  }
}
