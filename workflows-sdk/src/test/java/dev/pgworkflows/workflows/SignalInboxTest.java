package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Signals kept in each run's inbox, and waits on several arms, through the SDK. */
class SignalInboxTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  record Paid(String order, int amount) {}

  @Test
  void aSignalSentBeforeTheWaitIsDeliveredToIt() throws Exception {
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Workflow<String, Integer> wf =
        Workflow.define("inbox-early", String.class, Integer.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("slow", () -> release.await(20, TimeUnit.SECONDS));
                  return ctx.step()
                      .waitForEvent("paid", Paid.class, Match.of("order", in), Duration.ofHours(1))
                      .map(Paid::amount)
                      .orElse(-1);
                });
    server.serve(wf);
    Started s = server.client().start(wf, "o-1");
    WorkflowClient.SignalResult other =
        server.client().signal("inbox-early", s.runId(), "paid", new Paid("o-2", 1));
    WorkflowClient.SignalResult mine =
        server.client().signal("inbox-early", s.runId(), "paid", new Paid("o-1", 7), "pay-1");
    WorkflowClient.SignalResult again =
        server.client().signal("inbox-early", s.runId(), "paid", new Paid("o-1", 7), "pay-1");
    assertThat(other.buffered()).isTrue();
    assertThat(mine.buffered()).isTrue();
    assertThat(again.duplicate()).isTrue();
    assertThat(again.signalId()).isEqualTo(mine.signalId());
    release.countDown();
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("inbox-early", s.runId(), Integer.class, Duration.ofSeconds(30)))
        .isEqualTo(7);
    List<SignalInfo> signals = server.client().runs().signals("inbox-early", s.runId());
    assertThat(signals).hasSize(2);
    assertThat(signals.get(0).buffered()).isTrue();
    assertThat(signals.get(1).deliveredTo()).isEqualTo("paid");
    assertThatThrownBy(
            () -> server.client().signal("inbox-early", s.runId(), "paid", new Paid("o-1", 1)))
        .isInstanceOf(ApiException.class)
        .satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(409));
  }

  @Test
  void aHundredRacingSignalsAreEachDeliveredOrBufferedOnce() throws Exception {
    java.util.concurrent.CountDownLatch allSent = new java.util.concurrent.CountDownLatch(1);
    Workflow<String, Integer> wf =
        Workflow.define("inbox-race", String.class, Integer.class)
            .run(
                (ctx, in) -> {
                  int first =
                      ctx.step()
                          .waitForEvent("go", Integer.class, Match.any(), Duration.ofHours(1))
                          .orElse(-1);
                  // The run stays running until every signal was answered.
                  ctx.step().run("hold", () -> allSent.await(60, TimeUnit.SECONDS));
                  return first;
                });
    server.serve(wf);
    Started s = server.client().start(wf, "x");
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> server.client().runs().get("inbox-race", s.runId()).waitingFor() != null);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    List<Future<WorkflowClient.SignalResult>> sent = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      int n = i;
      sent.add(pool.submit(() -> server.client().signal("inbox-race", s.runId(), "go", n)));
    }
    int delivered = 0;
    int buffered = 0;
    for (Future<WorkflowClient.SignalResult> f : sent) {
      WorkflowClient.SignalResult r = f.get(60, TimeUnit.SECONDS);
      delivered += r.delivered() ? 1 : 0;
      buffered += r.buffered() ? 1 : 0;
    }
    pool.shutdown();
    allSent.countDown();
    assertThat(delivered).isEqualTo(1);
    assertThat(buffered).isEqualTo(99);
    Integer winner =
        server
            .client()
            .runs()
            .awaitResult("inbox-race", s.runId(), Integer.class, Duration.ofSeconds(30));
    List<SignalInfo> signals = server.client().runs().signals("inbox-race", s.runId());
    assertThat(signals).hasSize(100);
    assertThat(signals.stream().filter(x -> !x.buffered()).map(x -> x.payload().asInt()))
        .containsExactly(winner);
  }

  @Test
  void waitForAnyReturnsTheArmThatFiredAndWaitForAllEveryArm() {
    Workflow<String, String> wf =
        Workflow.define("arms", String.class, String.class)
            .run(
                (ctx, in) -> {
                  Arm paid = Arm.event("paid", Match.of("order", in));
                  Arm cancelled = Arm.event("cancelled");
                  Fired first =
                      ctx.step().waitForAny("pay-or-cancel", Duration.ofHours(1), paid, cancelled);
                  String a =
                      first.fired(paid)
                          ? "paid:" + first.payload(paid, Paid.class).orElseThrow().amount()
                          : "cancelled";
                  Arm x = Arm.event("x");
                  Arm y = Arm.event("y");
                  Fired both = ctx.step().waitForAll("x-and-y", Duration.ofHours(1), x, y);
                  Fired none =
                      ctx.step().waitForAny("nothing", Duration.ofMillis(200), Arm.event("never"));
                  return a
                      + "|"
                      + both.payload(x, Integer.class).orElseThrow()
                      + both.payload(y, Integer.class).orElseThrow()
                      + "|"
                      + none.timedOut();
                });
    server.serve(wf);
    Started s = server.client().start(wf, "o-9");
    server.client().signal("arms", s.runId(), "y", 2);
    server.client().signal("arms", s.runId(), "paid", new Paid("o-9", 5));
    server.client().signal("arms", s.runId(), "x", 1);
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("arms", s.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("paid:5|12|true");
    assertThat(server.client().runs().get("arms", s.runId()).status())
        .isEqualTo(RunStatus.COMPLETED);
    assertThat(server.client().runs().steps("arms", s.runId()))
        .extracting(StepInfo::name)
        .containsExactly("pay-or-cancel", "x-and-y", "nothing");
  }

  @Test
  void waitForAnyTakesAChildsEndOrATimeout() {
    Workflow<Integer, Integer> sleepy =
        Workflow.define("sleepy", Integer.class, Integer.class)
            .run(
                (ctx, in) -> {
                  ctx.step().sleep("zz", Duration.ofMillis(in));
                  return in;
                });
    Workflow<Integer, String> wf =
        Workflow.define("race-child", Integer.class, String.class)
            .run(
                (ctx, in) -> {
                  ChildRun<Integer> child = ctx.step().startChild("sleepy", sleepy, in);
                  Fired f =
                      ctx.step()
                          .waitForAny("child-or-timeout", Duration.ofSeconds(2), child.ended());
                  return f.timedOut()
                      ? "timeout"
                      : "child:" + f.result(child, Integer.class).orElseThrow();
                });
    server.serve(wf);
    server.serve(sleepy);
    Started fast = server.client().start(wf, 100);
    Started slow = server.client().start(wf, 20_000);
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("race-child", fast.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("child:100");
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("race-child", slow.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("timeout");
    assertThat(server.client().runs().signals("race-child", fast.runId()))
        .extracting(SignalInfo::event)
        .allMatch(e -> e.startsWith("__child."));
  }
}
