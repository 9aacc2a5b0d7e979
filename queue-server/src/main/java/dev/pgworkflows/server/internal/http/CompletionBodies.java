package dev.pgworkflows.server.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.protocol.Completion;
import dev.pgworkflows.protocol.CompletionBatch;
import dev.pgworkflows.protocol.Take;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The body of a batch completion, read so that an item that does not fit {@link Completion} (an
 * unknown field, a value of the wrong type, not an object) costs only itself. The envelope is not
 * an item: a body that is not a JSON object, {@code completions} that is not an array, an unknown
 * field beside it or a {@code take} that does not fit refuses the whole batch.
 */
final class CompletionBodies {
  private static final String ITEMS = "completions";

  private CompletionBodies() {}

  /**
   * A batch as read.
   *
   * @param completions the items in order; null where one was refused or was a JSON null
   * @param refused by position, why an item was refused; null where it was read
   */
  record Read(List<Completion> completions, ApiException[] refused, Take take) {}

  /** Reads the body; a 400 for an envelope that does not fit, or 0 or too many items. */
  static Read read(Context ctx) {
    byte[] raw = JsonBodies.body(ctx);
    // The common case, every item fitting, is read straight into records: the tree and the
    // conversion of each item cost only a batch that has an item that does not fit.
    try {
      CompletionBatch batch = Json.MAPPER.readValue(raw, CompletionBatch.class);
      if (batch == null) {
        throw ApiException.badRequest(null, "the request body must be a JSON object, not null");
      }
      checkSize(batch.completions() == null ? null : batch.completions().size());
      return new Read(
          batch.completions(), new ApiException[batch.completions().size()], batch.take());
    } catch (JsonMappingException e) {
      if (!inAnItem(e)) {
        throw JsonErrors.of(e, null);
      }
    } catch (JsonProcessingException e) {
      throw JsonErrors.of(e, null);
    } catch (IOException e) {
      throw ApiException.badRequest(null, "could not read the request body");
    }
    return itemByItem(JsonBodies.tree(raw));
  }

  private static int checkSize(Integer n) {
    if (n == null || n < 1 || n > CompletionRoutes.MAX_BATCH) {
      throw ApiException.badRequest(
          ITEMS, ITEMS + " must hold 1 to " + CompletionRoutes.MAX_BATCH + " completions");
    }
    return n;
  }

  /** Whether {@code e} arose inside one of the items rather than in the envelope. */
  private static boolean inAnItem(JsonMappingException e) {
    List<JsonMappingException.Reference> path = e.getPath();
    return path.size() >= 2
        && ITEMS.equals(path.get(0).getFieldName())
        && path.get(1).getIndex() >= 0;
  }

  private static Read itemByItem(JsonNode root) {
    JsonNode items = root.get(ITEMS);
    if (!root.isObject() || items == null || !items.isArray()) {
      // Not a batch whose items can be read one by one: the whole body's own error.
      JsonBodies.convert(root, CompletionBatch.class, null);
      throw ApiException.badRequest(ITEMS, ITEMS + " must be an array of completions");
    }
    // The envelope alone, its items left out, so that its unknown fields and its take are
    // checked as in a whole read.
    ObjectNode envelope = Json.MAPPER.createObjectNode();
    for (Map.Entry<String, JsonNode> f : root.properties()) {
      envelope.set(f.getKey(), ITEMS.equals(f.getKey()) ? envelope.arrayNode() : f.getValue());
    }
    Take take = JsonBodies.convert(envelope, CompletionBatch.class, null).take();
    int n = checkSize(items.size());
    List<Completion> completions = new ArrayList<>(Arrays.asList(new Completion[n]));
    ApiException[] refused = new ApiException[n];
    for (int i = 0; i < n; i++) {
      try {
        completions.set(
            i, JsonBodies.convert(items.get(i), Completion.class, ITEMS + "[" + i + "]"));
      } catch (ApiException e) {
        refused[i] = e;
      }
    }
    return new Read(completions, refused, take);
  }
}
