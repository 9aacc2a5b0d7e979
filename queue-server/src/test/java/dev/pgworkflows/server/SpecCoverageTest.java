package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The server has exactly the routes openapi.yaml describes, and serves the spec itself. */
class SpecCoverageTest {

  @Test
  void everyRouteIsInTheSpecAndEverySpecRouteExists() throws Exception {
    JsonNode spec = new ObjectMapper(new YAMLFactory()).readTree(SpecValidator.SPEC);
    List<String> documented = new ArrayList<>();
    for (Map.Entry<String, JsonNode> p : spec.get("paths").properties()) {
      for (Map.Entry<String, JsonNode> op : p.getValue().properties()) {
        if (List.of("get", "put", "post", "delete", "patch").contains(op.getKey())) {
          documented.add(op.getKey().toUpperCase(Locale.ROOT) + " " + p.getKey());
        }
      }
    }
    try (TestServer server = TestServer.start()) {
      List<String> served = server.server().routes();
      assertThat(served).containsExactlyInAnyOrderElementsOf(documented);
      Api.Response yaml = server.api().withToken(null).get("/openapi.yaml");
      assertThat(yaml.status()).isEqualTo(200);
      assertThat(yaml.body()).isEqualTo(SpecValidator.SPEC);
    }
  }
}
