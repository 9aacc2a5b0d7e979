package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Answers many times the size of the server's copy buffer arrive whole, plain or compressed. */
class LargeAnswersArriveWholeTest {
  @RegisterExtension static final ServerOnFreshDatabase server = ServerOnFreshDatabase.start();

  private static final Api api = server.api();

  private static String pad(int i) {
    return String.valueOf((char) ('a' + i)).repeat(3000);
  }

  /** A queue holding ten messages with 3,000-character bodies. */
  private static void fill(String queue) {
    api.put("/v1/queues/" + queue, null);
    for (int i = 0; i < 10; i++) {
      assertThat(
              api.post(
                      "/v1/queues/" + queue + "/messages",
                      Map.of("body", Map.of("n", i, "pad", pad(i))))
                  .status())
          .isEqualTo(201);
    }
  }

  private static void assertAllTen(JsonNode answer) {
    JsonNode messages = answer.get("messages");
    assertThat(messages).hasSize(10);
    Set<Integer> seen = new HashSet<>();
    for (JsonNode m : messages) {
      int n = m.get("body").get("n").asInt();
      assertThat(m.get("body").get("pad").asText()).isEqualTo(pad(n));
      seen.add(n);
    }
    assertThat(seen).hasSize(10);
  }

  @Test
  void aPlainAnswerOverTheCopyBufferArrivesWhole() {
    fill("plain");
    Api.Response got = api.post("/v1/queues/plain/messages/receive", Map.of("max", 10));
    assertThat(got.status()).isEqualTo(200);
    assertThat(got.header("Content-Encoding")).isNull();
    assertThat(got.body().length()).isGreaterThan(30_000);
    assertAllTen(got.json());
  }

  @Test
  void aCompressedAnswerOverTheCopyBufferArrivesWhole() throws Exception {
    fill("zipped");
    HttpResponse<byte[]> resp =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .build()
            .send(
                HttpRequest.newBuilder(
                        URI.create(server.url() + "/v1/queues/zipped/messages/receive"))
                    .header("Authorization", "Bearer test-token")
                    .header("Content-Type", "application/json")
                    .header("Accept-Encoding", "gzip")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"max\": 10}"))
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    assertThat(resp.statusCode()).isEqualTo(200);
    assertThat(resp.headers().firstValue("Content-Encoding")).hasValue("gzip");
    assertThat(resp.body().length).isLessThan(30_000);
    byte[] plain = new GZIPInputStream(new ByteArrayInputStream(resp.body())).readAllBytes();
    assertAllTen(Api.JSON.readTree(plain));
  }
}
