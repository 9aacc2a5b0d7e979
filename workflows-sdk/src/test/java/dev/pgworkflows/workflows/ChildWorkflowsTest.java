package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Child runs through the SDK: started once, awaited durably, linked, failing and cancelled. */
class ChildWorkflowsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Order(String id, int items) {}

  private static final AtomicInteger shipped = new AtomicInteger();

  static final Workflow<Order, String> SHIP =
      Workflow.define("ship", Order.class, String.class)
          .run(
              (ctx, in) ->
                  ctx.step()
                      .run(
                          "label",
                          String.class,
                          () -> {
                            shipped.incrementAndGet();
                            if (in.items() < 0) {
                              throw new IllegalStateException("nothing to ship");
                            }
                            return "label-" + in.id();
                          },
                          Retry.none()));

  @Test
  void aParentStartsAChildOnceAndGetsItsResult() {
    shipped.set(0);
    Workflow<Order, String> order =
        Workflow.define("order", Order.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<String> child = ctx.step().startChild("ship", SHIP, in);
                  String label = child.result();
                  return "done:" + label;
                });
    server.serve(order);
    server.serve(SHIP);
    Started s = server.client().start(order, new Order("o1", 2));
    String out =
        server
            .client()
            .runs()
            .awaitResult("order", s.runId(), String.class, Duration.ofSeconds(30));
    assertThat(out).isEqualTo("done:label-o1");
    assertThat(shipped.get()).isEqualTo(1);

    RunInfo parent = server.client().runs().get("order", s.runId());
    assertThat(parent.children()).hasSize(1);
    RunInfo.Child c = parent.children().get(0);
    assertThat(c.workflow()).isEqualTo("ship");
    assertThat(c.step()).isEqualTo("ship");
    assertThat(c.status()).isEqualTo(RunStatus.COMPLETED);
    RunInfo child = server.client().runs().get("ship", c.runId());
    assertThat(child.parent()).isEqualTo(new RunInfo.Parent(s.runId(), "order", "ship"));
    assertThat(server.client().runs().steps("order", s.runId()))
        .extracting(StepInfo::name, StepInfo::kind)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("ship", "child"),
            org.assertj.core.groups.Tuple.tuple("ship.result", "wait"));
  }

  @Test
  void aChildsFailureReachesTheParentAsAnExceptionItCanCatch() {
    Workflow<Order, String> order =
        Workflow.define("order-fails", Order.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<String> child = ctx.step().startChild("ship", SHIP, in);
                  try {
                    return child.result();
                  } catch (ChildFailedException e) {
                    return "caught:" + e.status() + ":" + e.error().path("message").asText();
                  }
                });
    server.serve(order);
    server.serve(SHIP);
    Started s = server.client().start(order, new Order("o2", -1));
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("order-fails", s.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("caught:FAILED:nothing to ship");
  }

  @Test
  void aChildThatFinishesBeforeTheParentWaitsIsStillSeen() {
    Workflow<Order, String> order =
        Workflow.define("order-late", Order.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<String> child = ctx.step().startChild("ship", SHIP, in);
                  ctx.step().sleep("nap", Duration.ofSeconds(2));
                  return child.result();
                });
    server.serve(order);
    server.serve(SHIP);
    Started s = server.client().start(order, new Order("o3", 1));
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("order-late", s.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("label-o3");
  }

  @Test
  void cancellingAParentCancelsItsRunningChildrenOrLeavesThemByPolicy() {
    Workflow<String, String> slow =
        Workflow.define("slow-child", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().waitForEvent("never", String.class, Match.any(), Duration.ofDays(1));
                  return in;
                });
    Workflow<String, String> parent =
        Workflow.define("parent-of-two", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<String> a = ctx.step().startChild("a", slow, "a");
                  ChildRun<String> b =
                      ctx.step()
                          .startChild(
                              "b",
                              slow,
                              "b",
                              ChildOptions.builder()
                                  .onParentCancel(ChildOptions.OnParentCancel.ABANDON)
                                  .build());
                  return a.result() + b.result();
                });
    server.serve(parent);
    server.serve(slow);
    Started s = server.client().start(parent, "x");
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> server.client().runs().get("parent-of-two", s.runId()).waitingFor() != null);
    RunInfo p = server.client().runs().get("parent-of-two", s.runId());
    assertThat(p.children()).hasSize(2);
    assertThat(server.client().runs().cancel("parent-of-two", s.runId())).isTrue();
    assertThat(server.client().runs().get("slow-child", p.children().get(0).runId()).status())
        .isEqualTo(RunStatus.CANCELLED);
    assertThat(server.client().runs().get("slow-child", p.children().get(1).runId()).status())
        .isEqualTo(RunStatus.RUNNING);
  }
}
