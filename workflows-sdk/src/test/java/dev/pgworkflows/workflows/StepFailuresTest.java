package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Steps that fail: each backoff kind retries and then fails the run with the step's error, a
 * non-retryable exception fails at once, a body may catch a step's failure, an exception outside a
 * step fails the run, and a step name used twice fails it as non-deterministic.
 */
class StepFailuresTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private Worker serve(Workflow<?, ?> wf) {
    return server.serve(wf);
  }

  @Test
  void eachBackoffKindRetriesThenFailsTheRunWithTheError() {
    Map<String, Retry> policies =
        Map.of(
            "fixed", Retry.fixed(3, Duration.ofMillis(20)),
            "linear", Retry.linear(4, Duration.ofMillis(10)),
            "exponential", Retry.exponential(5, Duration.ofMillis(5)));
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    for (Map.Entry<String, Retry> p : policies.entrySet()) {
      String name = "retry-" + p.getKey();
      AtomicInteger n = calls.computeIfAbsent(name, k -> new AtomicInteger());
      Workflow<String, String> wf =
          Workflow.define(name, String.class, String.class)
              .run(
                  (ctx, in) ->
                      ctx.step()
                          .run(
                              "flaky",
                              String.class,
                              () -> {
                                n.incrementAndGet();
                                throw new IllegalStateException("boom " + ctx.attempt());
                              },
                              p.getValue()));
      serve(wf);
      Started s = server.client().start(name, "x");
      assertThatThrownBy(
              () ->
                  server
                      .client()
                      .runs()
                      .awaitResult(name, s.runId(), String.class, Duration.ofSeconds(30)))
          .isInstanceOf(WorkflowFailedException.class);
      RunInfo run = server.client().runs().get(name, s.runId());
      assertThat(run.status()).isEqualTo(RunStatus.FAILED);
      assertThat(run.error().get("type").asText()).isEqualTo("java.lang.IllegalStateException");
      assertThat(run.error().get("message").asText()).isEqualTo("boom " + p.getValue().attempts());
      assertThat(run.error().get("stack").asText()).contains("IllegalStateException");
      assertThat(n.get()).as(name).isEqualTo(p.getValue().attempts());
      StepInfo step = server.client().runs().steps(name, s.runId()).get(0);
      assertThat(step.attempts()).isEqualTo(p.getValue().attempts());
    }
  }

  @Test
  void nonRetryableExceptionsFailAtOnceAndBodiesMayCatchStepFailures() {
    AtomicInteger tries = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("compensate", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    ctx.step()
                        .run(
                            "charge",
                            String.class,
                            () -> {
                              tries.incrementAndGet();
                              throw new IllegalArgumentException("card declined");
                            },
                            Retry.exponential(5, Duration.ofMillis(5))
                                .nonRetryable(IllegalArgumentException.class));
                    return "charged";
                  } catch (StepFailedException e) {
                    ctx.step().run("refund", () -> {});
                    return "compensated after " + e.step();
                  }
                });
    serve(wf);
    Started s = server.client().start("compensate", "x");
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("compensate", s.runId(), String.class, Duration.ofSeconds(20)))
        .isEqualTo("compensated after charge");
    assertThat(tries.get()).isEqualTo(1);
  }

  @Test
  void anExceptionOutsideAStepFailsTheRun() {
    Workflow<String, String> wf =
        Workflow.define("body-throws", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("fine", String.class, () -> "ok");
                  throw new UnsupportedOperationException("not today");
                });
    serve(wf);
    Started s = server.client().start("body-throws", "x");
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("body-throws", s.runId(), String.class, Duration.ofSeconds(20)))
        .isInstanceOf(WorkflowFailedException.class)
        .hasMessageContaining("not today");
  }

  @Test
  void aStepNameUsedTwiceFailsAsNonDeterministic() {
    Workflow<String, String> wf =
        Workflow.define("twice", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("same", String.class, () -> "a");
                  ctx.step().run("same", String.class, () -> "b");
                  return "unreachable";
                });
    serve(wf);
    Started s = server.client().start("twice", "x");
    assertThatThrownBy(
            () ->
                server
                    .client()
                    .runs()
                    .awaitResult("twice", s.runId(), String.class, Duration.ofSeconds(20)))
        .isInstanceOf(WorkflowFailedException.class);
    RunInfo run = server.client().runs().get("twice", s.runId());
    assertThat(run.error().get("type").asText()).endsWith("NonDeterministicWorkflowException");
    assertThat(run.error().get("message").asText()).contains("\"same\" is used twice");
  }
}
