package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.search.RunQuery;
import dev.pgworkflows.engine.internal.store.DatabaseException;
import dev.pgworkflows.engine.internal.store.SearchStore;
import dev.pgworkflows.protocol.Run;
import dev.pgworkflows.protocol.RunAttributes;
import dev.pgworkflows.protocol.RunPage;
import dev.pgworkflows.protocol.SearchAttribute;
import java.util.List;
import java.util.function.Supplier;

/**
 * Search attributes and queries over runs, the same for the server's routes and a client over JDBC:
 * a query's text is parsed here ({@link RunQuery}), its names and values checked by the database,
 * whose refusal comes back as a 400 naming {@code query} or {@code attributes.<name>}.
 */
public final class SearchCalls {
  private final SearchStore store;

  public SearchCalls(SearchStore store) {
    this.store = store;
  }

  /** A page of the runs {@code query} selects (null: all), newest first, before {@code cursor}. */
  public RunPage search(String query, Long cursor, int limit) {
    JsonNode tree = parse(query);
    List<Run> runs = named("query", () -> store.search(tree, cursor, limit));
    String next = runs.size() == limit ? Long.toString(runs.get(runs.size() - 1).runId()) : null;
    return new RunPage(runs, next);
  }

  public long count(String query) {
    JsonNode tree = parse(query);
    return named("query", () -> store.count(tree));
  }

  public SearchAttribute define(String name, String type) {
    return store.define(name, type);
  }

  public List<SearchAttribute> attributes() {
    return store.attributes();
  }

  /** The attributes of a run of workflow {@code name}; 404 when there is no such run. */
  public RunAttributes attributes(String name, long runId) {
    String attributes =
        store
            .attributes(name, runId)
            .orElseThrow(
                () ->
                    ApiException.notFound("run " + runId + " of workflow " + name + " not found"));
    return new RunAttributes(runId, attributes);
  }

  /**
   * Sets some of a run's attributes ({@code attributes}, a JSON object; a null value removes one)
   * and answers all it has.
   */
  public RunAttributes set(String name, long runId, String attributes) {
    if (attributes == null || attributes.equals("null")) {
      throw ApiException.badRequest(
          "attributes", "attributes is required: an object of search attribute names to values");
    }
    try {
      return new RunAttributes(runId, store.set(name, runId, attributes));
    } catch (DatabaseException e) {
      // The database names the attribute first: "attributes.amount is a number attribute: ..."
      String message = e.serverMessage();
      throw refusal(e, message.startsWith("attributes") ? message.split(" ", 2)[0] : "attributes");
    }
  }

  private static JsonNode parse(String query) {
    return query == null ? null : RunQuery.parse(query);
  }

  private static <T> T named(String field, Supplier<T> call) {
    try {
      return call.get();
    } catch (DatabaseException e) {
      throw refusal(e, field);
    }
  }

  /**
   * The database's refusal of bad input as a 400 naming {@code field}; anything else as it came.
   */
  private static RuntimeException refusal(DatabaseException e, String field) {
    if ("22023".equals(e.sqlState())) {
      return ApiException.badRequest(field, e.serverMessage());
    }
    return e;
  }
}
