package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.testing.TestDatabase;
import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Updates: a caller's request into a running run, answered by the handler its workflow declares,
 * over HTTP and through the JDBC engine alike. A validator refuses without journaling, a handler
 * that throws fails only the update, a repeated key gets the first answer without a second
 * execution, the body sees the handlers' state changes after its wait or sleep, and a run that
 * ended takes none.
 */
class UpdatesTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Item(String sku, int quantity) {}

  private static final TypeRef<List<Item>> ITEMS = new TypeRef<>() {};

  /** A cart: items are added by update until a checkout update ends its wait. */
  static Workflow<String, Integer> cart(String name, AtomicInteger handled) {
    return Workflow.define(name, String.class, Integer.class)
        .onUpdate(
            "addItem",
            Item.class,
            (ctx, item) -> {
              if (item.quantity() < 1) {
                throw new IllegalArgumentException("quantity must be at least 1");
              }
            },
            (ctx, item) -> {
              handled.incrementAndGet();
              List<Item> items = ctx.state().get("items", ITEMS);
              items = items == null ? new ArrayList<>() : new ArrayList<>(items);
              items.add(item);
              ctx.state().put("items", items);
              return items.size();
            })
        .onUpdate(
            "checkout",
            String.class,
            (ctx, note) -> {
              ctx.signal("checkout", Map.of("note", note));
              List<Item> items = ctx.state().get("items", ITEMS);
              return items == null ? 0 : items.size();
            })
        .onUpdate(
            "explode",
            String.class,
            (ctx, x) -> {
              ctx.state().put("lost", true);
              throw new IllegalStateException("boom");
            })
        .run(
            (ctx, customer) -> {
              ctx.step().waitForEvent("checkout", Map.class, Match.any(), Duration.ofHours(1));
              List<Item> items = ctx.state().get("items", ITEMS);
              if (ctx.state().get("lost", Boolean.class) != null) {
                return -1;
              }
              return items == null ? 0 : items.stream().mapToInt(Item::quantity).sum();
            });
  }

  @Test
  void aCartIsFilledByUpdatesAndCheckedOutByOne() {
    AtomicInteger handled = new AtomicInteger();
    Workflow<String, Integer> wf = cart("upd-cart", handled);
    server.serve(wf);
    WorkflowClient client = server.client();
    long run = client.start(wf, "acme").runId();

    assertThat(client.update("upd-cart", run, "addItem", new Item("tea", 2), Integer.class))
        .isEqualTo(1);
    UpdateOptions once = UpdateOptions.builder().idempotencyKey("coffee-1").build();
    assertThat(
            client.update("upd-cart", run, "addItem", new Item("coffee", 1), Integer.class, once))
        .isEqualTo(2);
    assertThat(
            client.update("upd-cart", run, "addItem", new Item("coffee", 1), Integer.class, once))
        .as("a repeated key answers the first update")
        .isEqualTo(2);
    assertThat(handled).hasValue(2);

    assertThatThrownBy(
            () -> client.update("upd-cart", run, "addItem", new Item("cake", 0), Integer.class))
        .isInstanceOf(ApiException.class)
        .hasMessage("update addItem was refused: quantity must be at least 1")
        .extracting(e -> ((ApiException) e).status())
        .isEqualTo(409);
    assertThatThrownBy(() -> client.update("upd-cart", run, "explode", "x", Void.class))
        .isInstanceOf(UpdateFailedException.class)
        .hasMessage("update explode failed: boom");
    assertThatThrownBy(() -> client.update("upd-cart", run, "addToWishlist", "x", Void.class))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("has no handler for update addToWishlist");

    assertThat(client.update("upd-cart", run, "checkout", "ring twice", Integer.class))
        .isEqualTo(2);
    assertThat(client.runs().awaitResult("upd-cart", run, Integer.class, Duration.ofSeconds(30)))
        .as("the body read the handlers' state after its wait; the failed update changed none")
        .isEqualTo(3);
    assertThat(
            client.runs().steps("upd-cart", run).stream()
                .map(StepInfo::name)
                .filter(n -> n.startsWith("__update.")))
        .as("the answered updates are journaled, the refused ones not")
        .hasSize(4);

    assertThatThrownBy(
            () -> client.update("upd-cart", run, "addItem", new Item("tea", 1), Integer.class))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("takes no update");
  }

  @Test
  void anUpdateDuringASleepIsAnsweredAtOnceAndTheSleepKeepsItsEnd() throws Exception {
    Workflow<String, String> wf =
        Workflow.define("upd-sleep", String.class, String.class)
            .onUpdate(
                "rename",
                String.class,
                (ctx, name) -> {
                  ctx.state().put("name", name);
                  return "renamed";
                })
            .run(
                (ctx, name) -> {
                  ctx.state().put("name", name);
                  ctx.step().sleep("nap", Duration.ofSeconds(3));
                  return ctx.state().get("name", String.class);
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    long started = System.nanoTime();
    long run = client.start(wf, "before").runId();
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (client.runs().steps("upd-sleep", run).isEmpty()) {
      assertThat(System.nanoTime()).isLessThan(until);
      Thread.sleep(20);
    }
    assertThat(client.update("upd-sleep", run, "rename", "after", String.class))
        .isEqualTo("renamed");
    assertThat(Duration.ofNanos(System.nanoTime() - started))
        .as("answered during the sleep")
        .isLessThan(Duration.ofSeconds(3));
    assertThat(client.runs().get("upd-sleep", run).status()).isEqualTo(RunStatus.RUNNING);
    assertThat(client.runs().awaitResult("upd-sleep", run, String.class, Duration.ofSeconds(30)))
        .isEqualTo("after");
    assertThat(Duration.ofNanos(System.nanoTime() - started))
        .as("the sleep kept its end")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void anUpdateWithStartMakesACartOnItsFirstItem() {
    Workflow<String, Integer> wf = cart("upd-lazy", new AtomicInteger());
    server.serve(wf);
    WorkflowClient client = server.client();
    StartOptions byCustomer = StartOptions.builder().idempotencyKey("cart-ada").build();
    StartedUpdate<Integer> first =
        client.updateWithStart(
            wf, "ada", byCustomer, "addItem", new Item("tea", 1), Integer.class, null);
    assertThat(first.runCreated()).isTrue();
    assertThat(first.answer()).isEqualTo(1);
    StartedUpdate<Integer> second =
        client.updateWithStart(
            wf, "ada", byCustomer, "addItem", new Item("jam", 1), Integer.class, null);
    assertThat(second.runCreated()).isFalse();
    assertThat(second.runId()).isEqualTo(first.runId());
    assertThat(second.answer()).isEqualTo(2);
    assertThatThrownBy(
            () ->
                client.updateWithStart(
                    wf,
                    "bob",
                    StartOptions.builder().build(),
                    "addItem",
                    new Item("x", 1),
                    Integer.class,
                    null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("idempotencyKey");
  }

  @Test
  void updatesWorkThroughTheJdbcEngine() throws Exception {
    TestDatabase db = TestDatabase.fresh();
    try (HikariDataSource ds = WithoutAServerTest.pool(db);
        PgWorkflows pgw = PgWorkflows.start(ds)) {
      Workflow<String, Integer> wf = cart("upd-jdbc", new AtomicInteger());
      pgw.serve(wf);
      long run = pgw.client().start(wf, "acme").runId();
      assertThat(pgw.client().update("upd-jdbc", run, "addItem", new Item("tea", 4), Integer.class))
          .isEqualTo(1);
      StartedUpdate<Integer> lazy =
          pgw.client()
              .updateWithStart(
                  wf,
                  "bob",
                  StartOptions.builder().idempotencyKey("cart-bob").build(),
                  "addItem",
                  new Item("jam", 1),
                  Integer.class,
                  null);
      assertThat(lazy.runCreated()).isTrue();
      assertThat(lazy.answer()).isEqualTo(1);
      assertThat(
              pgw.client()
                  .updateAsync("upd-jdbc", run, "checkout", "now", Integer.class, null)
                  .get())
          .isEqualTo(1);
      assertThat(
              pgw.client()
                  .runs()
                  .awaitResult("upd-jdbc", run, Integer.class, Duration.ofSeconds(30)))
          .isEqualTo(4);
    }
  }

  @Test
  void badDeclarationsAndCallsAreRefusedBeforeAnyIo() {
    assertThatThrownBy(
            () ->
                Workflow.define("upd-bad", String.class, String.class)
                    .onUpdate("no spaces", String.class, (ctx, x) -> x))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("update name");
    assertThatThrownBy(
            () ->
                Workflow.define("upd-bad", String.class, String.class)
                    .onUpdate("a", String.class, (ctx, x) -> x)
                    .onUpdate("a", String.class, (ctx, x) -> x))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has a handler already");
    assertThatThrownBy(() -> UpdateOptions.builder().timeout(Duration.ofDays(2)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> server.client().update("upd-bad", 1, "a b", "x", String.class))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("update must be");
  }
}
