package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.LoopbackReceiver;
import dev.pgworkflows.server.testing.ServerOnFreshDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Webhooks may not reach the server's own loopback, the cloud metadata service or the private
 * network, whoever subscribes. Nothing here connects outside 127.0.0.0/8: refusals at subscription
 * connect to nothing, and the refusal at delivery comes before the connect (the loopback receiver
 * that would get the request gets none).
 */
class WebhooksToInternalAddressesAreRefusedTest {
  @RegisterExtension
  static final ServerOnFreshDatabase server =
      ServerOnFreshDatabase.with("WORKFLOWS_WEBHOOK_ALLOW", "10.1.2.0/24");

  private static final Api api = server.api();

  @Test
  void loopbackMetadataAndPrivateAddressesAreRefusedWhenSubscribing() {
    refusedAtSubscription("http://127.0.0.1:8080/hook", "127.0.0.1 is a loopback address");
    refusedAtSubscription(
        "http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address");
    refusedAtSubscription("http://10.0.0.1/hook", "10.0.0.1 is a private address");
    refusedAtSubscription("https://172.16.5.4/hook", "172.16.5.4 is a private address");
    refusedAtSubscription("http://192.168.1.1/hook", "192.168.1.1 is a private address");
    refusedAtSubscription("http://100.64.0.1/hook", "100.64.0.1 is a shared");
    refusedAtSubscription("http://0.0.0.0:8080/hook", "0.0.0.0 is an unspecified");
    refusedAtSubscription("http://[::1]:8080/hook", "::1 is a loopback address");
    refusedAtSubscription("https://[fc00::1]/hook", "fc00::1 is a unique-local address");
    refusedAtSubscription("http://[fe80::1]/hook", "fe80::1 is a link-local address");
    refusedAtSubscription("http://[::ffff:169.254.169.254]/", "a link-local address");
    // The same loopback address, spelt as one number: refused for what it resolves to.
    refusedAtSubscription(
        "http://2130706433/hook", "\"2130706433\" resolves to 127.0.0.1, a loopback address");
    refusedAtSubscription(
        "http://localhost:8080/hook", "\"localhost\" resolves to 127.0.0.1, a loopback address");

    assertThat(api.get("/v1/topics/internal.x/subscriptions").json().get("subscriptions"))
        .isEmpty();
    assertThat(
            api.post("/v1/topics/internal.x/messages", Map.of("body", 1)).json().get("deliveries"))
        .isEmpty();
  }

  @Test
  void anAllowListedRangeMayBeSubscribed() {
    Api.Response sub =
        api.post(
            "/v1/topics/allowed.range/subscriptions",
            Map.of("type", "http", "url", "http://10.1.2.3/hook"));
    assertThat(sub.status()).isEqualTo(201);
    // Nothing is ever published to it: this test connects nowhere outside loopback.
    assertThat(
            api.delete("/v1/topics/allowed.range/subscriptions/" + sub.json().get("id").asLong())
                .status())
        .isEqualTo(204);
    refusedAtSubscription("http://10.1.3.1/hook", "10.1.3.1 is a private address");
  }

  @Test
  void aNameThatResolvesToLoopbackIsRefusedAtDeliveryBeforeAnyConnection() throws Exception {
    try (LoopbackReceiver receiver = LoopbackReceiver.accepting()) {
      // A subscription the API would refuse now, as one made by an older server, or while the name
      // pointed elsewhere, is found in the database.
      try (Connection c = server.database().connect();
          PreparedStatement ps =
              c.prepareStatement("SELECT * FROM queue.subscribe('legacy.hook', 'http', ?)")) {
        ps.setString(1, "http://localhost:" + receiver.port() + "/hook");
        ps.execute();
      }

      JsonNode out =
          api.post("/v1/topics/legacy.hook/messages", Map.of("body", Map.of("n", 1)))
              .json()
              .get("deliveries");
      assertThat(out).hasSize(1);
      long id = out.get(0).get("id").asLong();

      Awaitility.await().atMost(20, TimeUnit.SECONDS).until(() -> "dead".equals(status(id)));
      try (Connection c = server.database().connect();
          PreparedStatement ps =
              c.prepareStatement(
                  "SELECT attempts, last_error FROM queue.outbox WHERE delivery_id = ?")) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          // Dead at the first attempt: a refusal is not retried.
          assertThat(rs.getInt(1)).isEqualTo(1);
          assertThat(rs.getString(2))
              .startsWith("refused before connecting: \"localhost\" resolves to 127.0.0.1")
              .contains("a loopback address")
              .contains("WORKFLOWS_WEBHOOK_ALLOW");
        }
      }
      assertThat(receiver.requests()).isEmpty();
    }
  }

  private static void refusedAtSubscription(String url, String why) {
    Api.Response r =
        api.post("/v1/topics/internal.x/subscriptions", Map.of("type", "http", "url", url));
    assertThat(r.status()).as(url).isEqualTo(400);
    assertThat(r.isProblem()).isTrue();
    assertThat(r.json().get("field").asText()).isEqualTo("url");
    assertThat(r.json().get("detail").asText())
        .as(url)
        .startsWith("url refused: ")
        .contains(why)
        .contains("unless WORKFLOWS_WEBHOOK_ALLOW names them");
  }

  private static String status(long deliveryId) throws Exception {
    try (Connection c = server.database().connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT status FROM queue.outbox WHERE delivery_id = ?")) {
      ps.setLong(1, deliveryId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
