package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.WorkerChecks;
import dev.pgworkflows.protocol.Names;
import io.javalin.http.Context;

/** Path and query parameters, validated before anything reaches the database. */
public final class Params {
  private Params() {}

  /** The {queue} path parameter: checked here and again by the SQL functions. */
  public static String queue(Context ctx) {
    String name = ctx.pathParam("queue");
    if (!Names.isQueueName(name)) {
      throw ApiException.badRequest(
          "queue",
          "queue name must be 1 to 48 characters of a-z, 0-9, \"_\" and \"-\", not starting"
              + " with \"-\"");
    }
    return name;
  }

  /**
   * The {queue} path parameter of a route that changes or takes from the queue: a workflow's queue
   * {@code __wf_<name>} belongs to the engine and answers 409 before any I/O (the SQL functions
   * refuse it too). {@code action} names what was refused: "purge", "receive", ...
   */
  public static String notWorkflowQueue(Context ctx, String action) {
    String name = queue(ctx);
    if (Names.isWorkflowQueue(name)) {
      throw ApiException.conflict(
          "queue \""
              + name
              + "\" belongs to workflow \""
              + name.substring(Names.WORKFLOW_QUEUE_PREFIX.length())
              + "\": it takes sends (each starts a run) but no "
              + action);
    }
    return name;
  }

  /**
   * The {queue} path parameter of a send: a send to a workflow's queue {@code __wf_<name>} starts a
   * run of {@code <name>}, which must therefore be a workflow name.
   */
  public static String sendQueue(Context ctx) {
    String name = queue(ctx);
    if (Names.isWorkflowQueue(name)
        && !Names.isWorkflowName(name.substring(Names.WORKFLOW_QUEUE_PREFIX.length()))) {
      throw ApiException.badRequest(
          "queue",
          "a send to queue \""
              + name
              + "\" starts a run, but what follows "
              + Names.WORKFLOW_QUEUE_PREFIX
              + " is not a workflow name (1 to 43 characters of a-z, 0-9, \"_\" and \"-\", not"
              + " starting with \"-\")");
    }
    return name;
  }

  /** The {name} path parameter of the workflow routes: checked here and again in SQL. */
  public static String workflow(Context ctx) {
    String name = ctx.pathParam("name");
    if (!Names.isWorkflowName(name)) {
      throw ApiException.badRequest(
          "name",
          "workflow name must be 1 to 43 characters of a-z, 0-9, \"_\" and \"-\", not starting"
              + " with \"-\"");
    }
    return name;
  }

  /** The {runId} path parameter. */
  public static long runId(Context ctx) {
    return longPath(ctx, "runId");
  }

  public static long longPath(Context ctx, String name) {
    String raw = ctx.pathParam(name);
    try {
      long v = Long.parseLong(raw);
      if (v < 1) {
        throw ApiException.badRequest(name, name + " must be a positive integer");
      }
      return v;
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(name, name + " must be a positive integer");
    }
  }

  public static int intQuery(Context ctx, String name, int dflt, int lo, int hi) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return dflt;
    }
    try {
      int v = Integer.parseInt(raw);
      if (v < lo || v > hi) {
        throw ApiException.badRequest(name, name + " must be between " + lo + " and " + hi);
      }
      return v;
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(name, name + " must be a whole number");
    }
  }

  public static long longQuery(Context ctx, String name, long dflt) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return dflt;
    }
    try {
      long v = Long.parseLong(raw);
      if (v < 0) {
        throw ApiException.badRequest(name, name + " must not be negative");
      }
      return v;
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(name, name + " must be a whole number");
    }
  }

  /** Checks a bounded integer field of a JSON body. */
  public static int range(String field, Integer value, int dflt, int lo, int hi) {
    return WorkerChecks.range(field, value, dflt, lo, hi);
  }
}
