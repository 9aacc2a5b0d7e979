package dev.pgworkflows.workflows.internal.link;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.protocol.CancelOutcome;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SearchAttribute;
import dev.pgworkflows.protocol.SignalOutcome;
import dev.pgworkflows.protocol.StartRequest;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.UpdateResult;
import java.util.List;

/**
 * What a client asks about runs, in the protocol's records: over HTTP to a server, or over JDBC to
 * the engine in this process. Refusals and an engine out of reach are thrown as a worker's are (see
 * {@link WorkerTransport}).
 */
public interface RunsLink extends AutoCloseable {
  StartResult start(String workflow, StartRequest body);

  SignalOutcome signal(String workflow, long runId, String event, JsonNode payload, String key);

  /**
   * Sends update {@code update} with {@code key} (a repeat finds the first update with it) and
   * waits up to {@code waitSeconds} (0 to 60) for its answer: the update as it then stands. A
   * refused or dropped update is an {@code ApiException} 409.
   */
  UpdateResult update(
      String workflow, long runId, String update, JsonNode input, String key, int waitSeconds);

  /**
   * Starts a run (or finds the one the start's idempotency key names) and sends it update {@code
   * update} in one transaction, then waits as {@link #update} does; the answer says whether the run
   * was made ({@code runCreated}).
   */
  UpdateResult updateWithStart(
      String workflow,
      StartRequest start,
      String update,
      JsonNode input,
      String key,
      int waitSeconds);

  Run get(String workflow, long runId);

  Run chainLast(String workflow, long runId);

  CancelOutcome cancel(String workflow, long runId);

  /** A page of the runs {@code query} selects (null: all), newest first, after {@code cursor}. */
  RunPage search(String query, String cursor, int limit);

  long count(String query);

  /** Defines a search attribute; {@code created} false when it was already, with that type. */
  SearchAttribute defineAttribute(String name, String type);

  List<SearchAttribute> searchAttributes();

  RunAttributes attributes(String workflow, long runId);

  /** Sets some of a run's attributes (a JSON null removes one) and answers all it has. */
  RunAttributes setAttributes(String workflow, long runId, JsonNode attributes);

  @Override
  default void close() {}
}
