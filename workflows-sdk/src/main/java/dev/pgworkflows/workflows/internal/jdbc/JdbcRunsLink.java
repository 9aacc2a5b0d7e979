package dev.pgworkflows.workflows.internal.jdbc;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.runtime.RunCalls;
import dev.pgworkflows.engine.internal.runtime.SearchCalls;
import dev.pgworkflows.engine.internal.runtime.UpdateCalls;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SearchAttribute;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.StartAnswer;
import dev.pgworkflows.protocol.StartBatchItem;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.UpdateResult;
import dev.pgworkflows.protocol.UpdateWithStartRequest;
import dev.pgworkflows.workflows.internal.link.RunsLink;
import dev.pgworkflows.workflows.internal.link.StartBatches;
import dev.pgworkflows.workflows.internal.sql.SchemaVersion;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * A client's calls about runs as the engine's own ({@link RunCalls}), made in this process over
 * connections from the client's {@link DataSource}.
 */
public final class JdbcRunsLink implements RunsLink {
  private final DataSource dataSource;
  private final RunCalls calls;
  private final UpdateCalls updates;
  private final SearchCalls search;
  private final StartBatches starts;
  private final AtomicBoolean closed = new AtomicBoolean();

  public JdbcRunsLink(DataSource dataSource) {
    this.dataSource = dataSource;
    var engine = LocalEngines.acquire(dataSource, SchemaVersion.Side.CLIENT);
    this.calls = engine.runCalls();
    this.updates = engine.updateCalls();
    this.search = engine.searchCalls();
    this.starts =
        new StartBatches(
            new StartBatches.Sender() {
              @Override
              public StartResult one(String workflow, StartRequest body) {
                return EngineErrors.call(
                    () -> calls.start(workflow, body, RunTraces.fromCurrentSpan()));
              }

              @Override
              public List<StartAnswer> many(String workflow, List<StartBatchItem> items) {
                return EngineErrors.call(
                    () -> calls.startMany(workflow, items, RunTraces::fromTraceparent));
              }
            });
  }

  /**
   * Starts made by several threads at once share a transaction, as over HTTP they share a request.
   */
  @Override
  public StartResult start(String workflow, StartRequest body) {
    return starts.start(workflow, body);
  }

  @Override
  public SignalOutcome signal(
      String workflow, long runId, String event, JsonNode payload, String key) {
    return EngineErrors.call(
        () -> calls.signal(workflow, runId, event, payload, key, "idempotencyKey"));
  }

  @Override
  public UpdateResult update(
      String workflow, long runId, String update, JsonNode input, String key, int waitSeconds) {
    return answered(
        () -> updates.send(workflow, runId, update, input, key, "idempotencyKey", waitSeconds));
  }

  @Override
  public UpdateResult updateWithStart(
      String workflow,
      StartRequest start,
      String update,
      JsonNode input,
      String key,
      int waitSeconds) {
    return answered(
        () ->
            updates.sendWithStart(
                workflow,
                new UpdateWithStartRequest(start, update, input, waitSeconds),
                RunTraces.fromCurrentSpan(),
                key,
                "idempotencyKey",
                waitSeconds));
  }

  /** An update's answer, once the engine's wait for it is over, refusals as a server's. */
  private static UpdateResult answered(Supplier<CompletableFuture<UpdateResult>> call) {
    return EngineErrors.call(
        () -> {
          try {
            return call.get().join();
          } catch (CompletionException e) {
            throw EngineErrors.translate(e.getCause());
          }
        });
  }

  @Override
  public Run get(String workflow, long runId) {
    return EngineErrors.call(() -> calls.get(workflow, runId));
  }

  @Override
  public Run chainLast(String workflow, long runId) {
    return EngineErrors.call(() -> calls.chainLast(workflow, runId));
  }

  @Override
  public CancelOutcome cancel(String workflow, long runId) {
    return EngineErrors.call(() -> calls.cancel(workflow, runId));
  }

  @Override
  public RunPage search(String query, String cursor, int limit) {
    Long before;
    try {
      before = cursor == null ? null : Long.valueOf(cursor);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("cursor must be a run id, got " + cursor, e);
    }
    return EngineErrors.call(() -> search.search(query, before, limit));
  }

  @Override
  public long count(String query) {
    return EngineErrors.call(() -> search.count(query));
  }

  @Override
  public SearchAttribute defineAttribute(String name, String type) {
    return EngineErrors.call(() -> search.define(name, type));
  }

  @Override
  public List<SearchAttribute> searchAttributes() {
    return EngineErrors.call(search::attributes);
  }

  @Override
  public RunAttributes attributes(String workflow, long runId) {
    return EngineErrors.call(() -> search.attributes(workflow, runId));
  }

  @Override
  public RunAttributes setAttributes(String workflow, long runId, JsonNode attributes) {
    return EngineErrors.call(() -> search.set(workflow, runId, attributes.toString()));
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      LocalEngines.release(dataSource);
    }
  }
}
