package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;

/**
 * What the server answered a request that succeeded: the body as it came, for {@code --json}, and
 * parsed, for tables.
 */
record Answer(int status, String body, JsonNode json) {
  static Answer of(int status, String body) {
    return new Answer(status, body, body.isBlank() ? MissingNode.getInstance() : Json.parse(body));
  }
}
