package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.runtime.WorkerIdentity;
import dev.pgworkflows.protocol.Headers;
import dev.pgworkflows.protocol.Labels;
import io.javalin.http.Context;
import java.util.Map;

/**
 * Who a worker is, from the headers its polls and streams carry: {@value #ID}, {@value #HOST},
 * {@value #SLOTS} and {@value #LABELS}. Each is optional: without an id or a host the worker is
 * known by its address. A malformed one is a 400 naming the header, before anything else of the
 * request is done.
 */
final class WorkerHeaders {
  static final String ID = Headers.WORKER_ID;
  static final String HOST = Headers.WORKER_HOST;
  static final String SLOTS = Headers.WORKER_SLOTS;
  static final String LABELS = Headers.WORKER_LABELS;

  private WorkerHeaders() {}

  static WorkerIdentity of(Context ctx) {
    String id = ctx.header(ID);
    String host = ctx.header(HOST);
    String slots = ctx.header(SLOTS);
    if (id == null || host == null) {
      String address = ctx.ip();
      id = id == null ? address : id;
      host = host == null ? address : host;
    }
    String labels = ctx.header(LABELS);
    return new WorkerIdentity(
        printable(ID, id, 200),
        printable(HOST, host, 255),
        slots == null ? null : slots(slots),
        labels == null ? Map.of() : labels(labels));
  }

  private static Map<String, String> labels(String value) {
    try {
      return Labels.parse(LABELS, value);
    } catch (Labels.Invalid e) {
      throw ApiException.badRequest(LABELS, e.getMessage());
    }
  }

  private static String printable(String header, String value, int max) {
    if (value.isEmpty() || value.length() > max) {
      throw ApiException.badRequest(
          header, header + " must be 1 to " + max + " printable ASCII characters");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw ApiException.badRequest(
            header, header + " must be 1 to " + max + " printable ASCII characters");
      }
    }
    return value;
  }

  private static int slots(String value) {
    try {
      int n = Integer.parseInt(value);
      if (n >= 0 && n <= 100_000) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiException.badRequest(SLOTS, SLOTS + " must be a whole number from 0 to 100000");
  }
}
