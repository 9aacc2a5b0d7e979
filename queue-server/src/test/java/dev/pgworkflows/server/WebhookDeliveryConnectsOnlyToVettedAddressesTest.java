package dev.pgworkflows.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pgworkflows.server.testing.LoopbackReceiver;
import dev.pgworkflows.testing.TestDatabase;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Delivery looks the host up itself, vets every address, and connects to the vetted one: a name
 * that pointed at a public address when it was subscribed and at loopback now is refused (DNS
 * rebinding); an allow-listed name is reached through the address it was vetted at, with its own
 * name in {@code Host}. The names exist only in this test's resolver, so a client doing its own
 * lookup could not reach them. Every connection made here goes to 127.0.0.1: the public address is
 * only ever an answer at subscription, where nothing connects.
 */
class WebhookDeliveryConnectsOnlyToVettedAddressesTest {
  private static final String REBINDING = "rebinding.hooks.test";
  private static final String ALLOWED = "allowed.hooks.test";

  /** What {@link #REBINDING} resolves to now: a public address, until the test changes it. */
  private static volatile String rebindingAnswer = "203.0.113.10";

  private static final List<String> answers = new CopyOnWriteArrayList<>();
  private static TestDatabase db;
  private static QueueServer server;
  private static Api api;

  @BeforeAll
  static void start() {
    db = TestDatabase.fresh();
    ServerConfig config =
        ServerConfig.from(
                Map.of(
                    "WORKFLOWS_PORT", "0",
                    "WORKFLOWS_DB_POOL_SIZE", "8",
                    "WORKFLOWS_WEBHOOK_ALLOW", ALLOWED,
                    "WORKFLOWS_DELIVERY_MAX_ATTEMPTS", "1"))
            .withDatabase(db.jdbcUrl(), db.user(), db.password());
    server =
        QueueServer.builder(config)
            .webhookResolver(WebhookDeliveryConnectsOnlyToVettedAddressesTest::resolve)
            .start();
    api = new Api("http://localhost:" + server.port(), TestServer.TOKEN);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static InetAddress[] resolve(String host) throws UnknownHostException {
    InetAddress[] a =
        switch (host) {
          case REBINDING -> new InetAddress[] {InetAddress.getByName(rebindingAnswer)};
          case ALLOWED -> new InetAddress[] {InetAddress.getByName("127.0.0.1")};
          default -> InetAddress.getAllByName(host);
        };
    answers.add(host + "=" + a[0].getHostAddress());
    return a;
  }

  @Test
  void aNameThatTurnsToLoopbackAfterSubscribingIsRefusedAtDelivery() throws Exception {
    try (LoopbackReceiver receiver = LoopbackReceiver.accepting()) {
      Api.Response sub =
          api.post(
              "/v1/topics/rebind.x/subscriptions",
              Map.of("type", "http", "url", "http://" + REBINDING + ":" + receiver.port() + "/"));
      assertThat(sub.status()).isEqualTo(201);
      assertThat(answers).contains(REBINDING + "=203.0.113.10");

      rebindingAnswer = "127.0.0.1";
      long id = publish("rebind.x");

      Map<String, Object> row = awaitFinished(id);
      assertThat(row.get("status")).isEqualTo("dead");
      assertThat((String) row.get("last_error"))
          .startsWith(
              "refused before connecting: \""
                  + REBINDING
                  + "\" resolves to 127.0.0.1,"
                  + " a loopback address");
      assertThat(receiver.requests()).isEmpty();
    }
  }

  @Test
  void anAllowListedNameIsReachedAtItsVettedAddressWithItsOwnHostHeader() throws Exception {
    try (LoopbackReceiver receiver = LoopbackReceiver.accepting()) {
      String host = ALLOWED + ":" + receiver.port();
      Api.Response sub =
          api.post(
              "/v1/topics/allowed.x/subscriptions",
              Map.of("type", "http", "url", "http://" + host + "/hook?q=1"));
      assertThat(sub.status()).isEqualTo(201);

      long id = publish("allowed.x");

      assertThat(awaitFinished(id).get("status")).isEqualTo("delivered");
      assertThat(receiver.requests()).hasSize(1);
      LoopbackReceiver.Request got = receiver.requests().get(0);
      assertThat(got.path()).isEqualTo("/hook?q=1");
      assertThat(got.headers().getFirst("Host")).isEqualTo(host);
      assertThat(got.headers().getFirst("Webhook-Id")).isEqualTo(Long.toString(id));
      assertThat(Api.JSON.readTree(got.body()).get("n").asInt()).isEqualTo(1);
    }
  }

  @Test
  void aRedirectIsAFailedAttemptAndIsNotFollowed() throws Exception {
    try (LoopbackReceiver receiver = LoopbackReceiver.redirecting(302, "/redirected")) {
      api.post(
          "/v1/topics/redirect.x/subscriptions",
          Map.of("type", "http", "url", "http://" + ALLOWED + ":" + receiver.port() + "/hook"));

      long id = publish("redirect.x");

      Map<String, Object> row = awaitFinished(id);
      // One attempt allowed on this server: the failed one is the last.
      assertThat(row.get("status")).isEqualTo("dead");
      assertThat(row.get("last_error")).isEqualTo("HTTP status 302 (redirects are not followed)");
      assertThat(receiver.requests())
          .extracting(LoopbackReceiver.Request::path)
          .containsExactly("/hook");
    }
  }

  private static long publish(String topic) {
    JsonNode out =
        api.post("/v1/topics/" + topic + "/messages", Map.of("body", Map.of("n", 1)))
            .json()
            .get("deliveries");
    assertThat(out).hasSize(1);
    return out.get(0).get("id").asLong();
  }

  /** The outbox row once it is no longer pending: status and last_error. */
  private static Map<String, Object> awaitFinished(long id) {
    return Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> outbox(id), row -> !"pending".equals(row.get("status")));
  }

  private static Map<String, Object> outbox(long id) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT status, coalesce(last_error, '') FROM queue.outbox WHERE delivery_id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return Map.of("status", rs.getString(1), "last_error", rs.getString(2));
      }
    }
  }
}
