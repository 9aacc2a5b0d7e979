package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
import dev.pgworkflows.workflows.testing.WorkerJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Streams of output written by a run's body and steps, read live through the client: in order, seen
 * while the run goes on, ending at close or at the run's end, and without duplicates when a step is
 * retried or the body is replayed after its worker was killed; writes from threads that are neither
 * the body's nor a current attempt's refused; a restart from a step writing again what it wrote.
 */
class RunStreamsTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  private static <T> List<T> all(StreamReader<T> reader) {
    List<T> out = new ArrayList<>();
    for (StreamReader.Entry<T> e : reader) {
      out.add(e.value());
    }
    return out;
  }

  @Test
  void bodyAndStepEntriesArriveInOrderWhileTheRunGoesOnAndTheIteratorEndsAtClose()
      throws Exception {
    CountDownLatch seen = new CountDownLatch(1);
    Workflow<String, String> wf =
        Workflow.define("stream-order", String.class, String.class)
            .run(
                (ctx, in) -> {
                  RunStream progress = ctx.stream("progress");
                  progress.write("start");
                  ctx.step()
                      .run(
                          "work",
                          () -> {
                            progress.write("one");
                            progress.write("two");
                            // The reader sees these before the step ends.
                            if (!seen.await(30, TimeUnit.SECONDS)) {
                              throw new IllegalStateException("the reader saw nothing");
                            }
                            progress.write("three");
                          });
                  progress.write("done");
                  progress.close();
                  ctx.step().run("after", () -> {});
                  return "ok";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("stream-order", "in");

    List<String> got = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    try (StreamReader<String> reader =
        client.runs().stream(run.workflow(), run.runId(), "progress", String.class)) {
      for (StreamReader.Entry<String> e : reader) {
        got.add(e.value());
        offsets.add(e.offset());
        if (e.value().equals("two")) {
          seen.countDown();
        }
      }
    }
    assertThat(got).containsExactly("start", "one", "two", "three", "done");
    assertThat(offsets).containsExactly(0L, 1L, 2L, 3L, 4L);
    assertThat(
            client
                .runs()
                .awaitResult("stream-order", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(
            all(
                client.runs().stream(run.workflow(), run.runId(), "progress", String.class)
                    .from(3)))
        .containsExactly("three", "done");
  }

  @Test
  void theIteratorEndsWhenTheRunEndsWithoutAClose() {
    Workflow<String, String> wf =
        Workflow.define("stream-run-end", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step().run("tick", () -> ctx.stream("ticks").write(1));
                  ctx.step().sleep("pause", Duration.ofMillis(300));
                  ctx.step().run("tock", () -> ctx.stream("ticks").write(2));
                  return "ok";
                });
    server.serve(wf);
    Started run = server.client().start("stream-run-end", "in");
    assertThat(
            all(server.client().runs().stream(run.workflow(), run.runId(), "ticks", Integer.class)))
        .containsExactly(1, 2);
    assertThat(server.client().runs().get("stream-run-end", run.runId()).status())
        .isEqualTo(RunStatus.COMPLETED);
  }

  @Test
  void aStepThatWritesThreeEntriesThenFailsIsRetriedWithoutDuplicates() {
    AtomicInteger attempts = new AtomicInteger();
    Workflow<String, String> wf =
        Workflow.define("stream-retry", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.step()
                      .run(
                          "flaky",
                          () -> {
                            int attempt = attempts.incrementAndGet();
                            RunStream out = ctx.stream("out");
                            out.write("a" + attempt + "-0");
                            out.write("a" + attempt + "-1");
                            out.write("a" + attempt + "-2");
                            if (attempt == 1) {
                              throw new IllegalStateException("first attempt fails");
                            }
                            out.write("a" + attempt + "-3");
                          },
                          Retry.fixed(3, Duration.ofMillis(100)));
                  ctx.stream("out").close();
                  return "ok";
                });
    server.serve(wf);
    Started run = server.client().start("stream-retry", "in");
    // The failed attempt's entries stay; the retry adds only what lies past them.
    assertThat(all(server.client().runs().stream(run.workflow(), run.runId(), "out", String.class)))
        .containsExactly("a1-0", "a1-1", "a1-2", "a2-3");
    assertThat(attempts.get()).isEqualTo(2);
  }

  @Test
  void replayedBodyWritesAreNotDuplicatedAfterTheWorkerJvmIsKilledMidRun(@TempDir Path dir)
      throws Exception {
    Path marker = dir.resolve("hanging");
    WorkflowClient client = server.client();
    Process child =
        WorkerJvm.start(
            StreamsWorkflow.class, dir.resolve("child.out"), server.url(), marker.toString());
    try {
      Started run = client.start("streams-replay", "go");
      Awaitility.await().atMost(60, TimeUnit.SECONDS).until(() -> Files.exists(marker));
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-step

      Iterator<StreamReader.Entry<String>> live =
          client.runs().stream(run.workflow(), run.runId(), "out", String.class).iterator();
      List<String> before = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        before.add(live.next().value());
      }
      assertThat(before).containsExactly("b0", "s1-0", "b1", "h0");

      server.serve(StreamsWorkflow.define(marker, false));
      assertThat(
              client
                  .runs()
                  .awaitResult("streams-replay", run.runId(), String.class, Duration.ofSeconds(60)))
          .isEqualTo("done");
      List<String> rest = new ArrayList<>();
      live.forEachRemaining(e -> rest.add(e.value()));
      assertThat(rest).containsExactly("h1", "b2");
      assertThat(all(client.runs().stream(run.workflow(), run.runId(), "out", String.class)))
          .containsExactly("b0", "s1-0", "b1", "h0", "h1", "b2");
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void badNamesOversizeValuesAndWritesAfterCloseFailClearly() {
    assertThatThrownBy(() -> server.client().runs().stream("wf", 1, "bad name", String.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("stream name");
    List<String> errors = new ArrayList<>();
    Workflow<String, String> wf =
        Workflow.define("stream-refusals", String.class, String.class)
            .run(
                (ctx, in) -> {
                  try {
                    ctx.stream("bad name");
                  } catch (IllegalArgumentException e) {
                    errors.add(e.getMessage());
                  }
                  RunStream out = ctx.stream("out");
                  try {
                    out.write("x".repeat(70_000));
                  } catch (IllegalArgumentException e) {
                    errors.add(e.getMessage());
                  }
                  out.write("kept");
                  out.close();
                  try {
                    out.write("late");
                  } catch (ApiException e) {
                    errors.add(e.status() + " " + e.getMessage());
                  }
                  return "ok";
                });
    server.serve(wf);
    Started run = server.client().start("stream-refusals", "in");
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("stream-refusals", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(errors).hasSize(3);
    assertThat(errors.get(0)).contains("stream name \"bad name\"");
    assertThat(errors.get(1)).contains("at most 65536 bytes");
    assertThat(errors.get(2)).startsWith("409").contains("is closed");
    assertThat(all(server.client().runs().stream(run.workflow(), run.runId(), "out", String.class)))
        .containsExactly("kept");
  }

  /**
   * The example of docs/state-and-streams.md, as printed there (its server's address made this
   * test's).
   */
  @Test
  @SuppressWarnings({"rawtypes", "unchecked"})
  void thePageExampleRunsAsPrinted() {
    String url = server.url();
    Workflow<String[], Integer> resize =
        Workflow.define("resize", String[].class, Integer.class)
            .run(
                (ctx, files) -> {
                  RunStream progress = ctx.stream("progress");
                  progress.write(Map.of("files", files.length)); // from the body
                  ctx.step()
                      .run(
                          "resize-all",
                          () -> {
                            for (String f : files) {
                              progress.write(Map.of("done", f)); // from the step, as it works
                            }
                          });
                  progress.close();
                  return files.length;
                });
    Worker worker = resize.serve(WorkerOptions.url(url));

    WorkflowClient client = WorkflowClient.connect(url);
    Started run = client.start(resize, new String[] {"a.png", "b.png"});
    List<String> printed = new ArrayList<>();
    for (StreamReader.Entry<Map> e :
        client.runs().stream(run.workflow(), run.runId(), "progress", Map.class)) {
      printed.add(e.offset() + " " + e.value());
    }
    worker.close();
    assertThat(printed).containsExactly("0 {files=2}", "1 {done=a.png}", "2 {done=b.png}");
  }

  @Test
  void aDroppedConnectionIsResumedAfterTheLastEntryRead() throws Exception {
    Workflow<String, String> wf =
        Workflow.define("stream-resume", String.class, String.class)
            .run(
                (ctx, in) -> {
                  RunStream out = ctx.stream("out");
                  ctx.step()
                      .run(
                          "first",
                          () -> {
                            for (int i = 0; i < 3; i++) {
                              out.write(i);
                            }
                          });
                  ctx.step().waitForEvent("go", String.class, Match.any(), Duration.ofMinutes(1));
                  ctx.step()
                      .run(
                          "second",
                          () -> {
                            for (int i = 3; i < 6; i++) {
                              out.write(i);
                            }
                          });
                  out.close();
                  return "ok";
                });
    server.serve(wf);
    Started run = server.client().start("stream-resume", "in");
    try (CuttingProxy proxy = new CuttingProxy(server.url());
        StreamReader<Integer> reader =
            WorkflowClient.connect(proxy.url()).runs().stream(
                run.workflow(), run.runId(), "out", Integer.class)) {
      Iterator<StreamReader.Entry<Integer>> it = reader.iterator();
      List<Integer> got = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        got.add(it.next().value());
      }
      proxy.cutAll(); // the connection drops while the reader waits for more
      server.client().signal("stream-resume", run.runId(), "go", "now");
      it.forEachRemaining(e -> got.add(e.value()));
      assertThat(got).containsExactly(0, 1, 2, 3, 4, 5);
    }
  }

  @Test
  void aWriteFromAThreadAStepStartedIsRefusedAndTheBodysWritesKeepTheirPlaces() {
    Workflow<String, String> wf =
        Workflow.define("stream-child-thread", String.class, String.class)
            .run(
                (ctx, in) -> {
                  RunStream out = ctx.stream("out");
                  out.write("body-0");
                  String refused =
                      ctx.step()
                          .run(
                              "spawn",
                              String.class,
                              () -> {
                                AtomicReference<Throwable> error = new AtomicReference<>();
                                Thread child =
                                    new Thread(
                                        () -> {
                                          try {
                                            out.write("from a child thread");
                                          } catch (Throwable t) {
                                            error.set(t);
                                          }
                                        });
                                child.start();
                                child.join();
                                out.write("step");
                                Throwable t = error.get();
                                return t == null
                                    ? "none"
                                    : t.getClass().getSimpleName() + " " + t.getMessage();
                              });
                  out.write("body-1");
                  out.close();
                  return refused;
                });
    server.serve(wf);
    Started run = server.client().start("stream-child-thread", "in");
    String refused =
        server
            .client()
            .runs()
            .awaitResult("stream-child-thread", run.runId(), String.class, Duration.ofSeconds(30));
    assertThat(refused)
        .startsWith("IllegalStateException")
        .contains("neither the workflow body's nor a step's");
    assertThat(all(server.client().runs().stream(run.workflow(), run.runId(), "out", String.class)))
        .containsExactly("body-0", "step", "body-1");
  }

  @Test
  void aTimedOutAttemptsThreadCannotWriteUnderTheNextAttemptsIdentities() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    CountDownLatch retried = new CountDownLatch(1);
    AtomicReference<Throwable> late = new AtomicReference<>();
    CountDownLatch lateTried = new CountDownLatch(1);
    Workflow<String, String> wf =
        Workflow.define("stream-timed-out", String.class, String.class)
            .run(
                (ctx, in) -> {
                  RunStream out = ctx.stream("out");
                  ctx.step()
                      .run(
                          "slow",
                          () -> {
                            if (attempts.incrementAndGet() == 1) {
                              out.write("first-0");
                              // Ignores its interrupt: left running once it timed out.
                              while (true) {
                                try {
                                  if (retried.await(30, TimeUnit.SECONDS)) {
                                    break;
                                  }
                                } catch (InterruptedException ignored) {
                                  // abandoned, and carries on
                                }
                              }
                              try {
                                out.write("first-late");
                              } catch (Throwable t) {
                                late.set(t);
                              }
                              lateTried.countDown();
                              return;
                            }
                            out.write("second-0");
                            out.write("second-1");
                            retried.countDown();
                            if (!lateTried.await(30, TimeUnit.SECONDS)) {
                              throw new IllegalStateException("the abandoned attempt did not try");
                            }
                            out.write("second-2");
                          },
                          Retry.fixed(2, Duration.ofMillis(50))
                              .withTimeout(Duration.ofMillis(300)));
                  out.close();
                  return "ok";
                });
    server.serve(wf);
    Started run = server.client().start("stream-timed-out", "in");
    assertThat(
            server
                .client()
                .runs()
                .awaitResult("stream-timed-out", run.runId(), String.class, Duration.ofSeconds(60)))
        .isEqualTo("ok");
    assertThat(late.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("after its attempt was over");
    // The retry's first write repeats the first attempt's identity (documented); the abandoned
    // thread took none of the retry's.
    assertThat(all(server.client().runs().stream(run.workflow(), run.runId(), "out", String.class)))
        .containsExactly("first-0", "second-1", "second-2");
  }

  @Test
  void aRestartFromAStepThatWroteAndClosedTheStreamWritesItsNewEntries() {
    AtomicInteger round = new AtomicInteger(1);
    List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
    Workflow<String, String> wf =
        Workflow.define("stream-restarted", String.class, String.class)
            .run(
                (ctx, in) -> {
                  RunStream out = ctx.stream("out");
                  int r = round.get();
                  out.write("body0@" + r);
                  ctx.step().run("a", () -> out.write("a@" + r));
                  out.write("body1@" + r);
                  ctx.step().run("b", () -> out.write("b@" + r));
                  try {
                    out.write("body2@" + r);
                    out.close();
                  } catch (ApiException e) {
                    errors.add(e.status() + " " + e.getMessage());
                  }
                  ctx.step()
                      .run(
                          "c",
                          () -> {
                            if (r == 1) {
                              throw new IllegalStateException("c fails the first time");
                            }
                          },
                          Retry.none());
                  return "ok";
                });
    server.serve(wf);
    WorkflowClient client = server.client();
    Started run = client.start("stream-restarted", "in");
    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () -> client.runs().get("stream-restarted", run.runId()).status() == RunStatus.FAILED);
    assertThat(all(client.runs().stream(run.workflow(), run.runId(), "out", String.class)))
        .containsExactly("body0@1", "a@1", "body1@1", "b@1", "body2@1");

    round.set(2);
    client.runs().restart("stream-restarted", run.runId(), "b");
    assertThat(
            client
                .runs()
                .awaitResult("stream-restarted", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(errors).isEmpty();
    // Before the restart point the entries stay (their repeats are skipped); from it on, the
    // restarted step and the body after it wrote anew.
    assertThat(all(client.runs().stream(run.workflow(), run.runId(), "out", String.class)))
        .containsExactly("body0@1", "a@1", "body1@1", "b@2", "body2@2");
  }

  @Test
  void closingAReaderFromAnotherThreadEndsAnIterationWaitingForEntries() throws Exception {
    Workflow<String, String> wf =
        Workflow.define("stream-close-reader", String.class, String.class)
            .run(
                (ctx, in) -> {
                  ctx.stream("out").write("only");
                  ctx.step()
                      .waitForEvent("never", String.class, Match.any(), Duration.ofMinutes(5));
                  return "ok";
                });
    server.serve(wf);
    Started run = server.client().start("stream-close-reader", "in");
    StreamReader<String> reader =
        server.client().runs().stream(run.workflow(), run.runId(), "out", String.class);
    Iterator<StreamReader.Entry<String>> it = reader.iterator();
    assertThat(it.next().value()).isEqualTo("only");
    CountDownLatch ended = new CountDownLatch(1);
    AtomicReference<Boolean> more = new AtomicReference<>();
    Thread iterating =
        new Thread(
            () -> {
              more.set(it.hasNext()); // waits: nothing more is written
              ended.countDown();
            });
    iterating.start();
    Thread.sleep(500);
    long t0 = System.nanoTime();
    reader.close();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(1));
    // At the next line the server sends: a keep-alive comment comes every 15 s.
    assertThat(ended.await(20, TimeUnit.SECONDS)).isTrue();
    assertThat(more.get()).isFalse();
    server.client().runs().cancel("stream-close-reader", run.runId());
  }
}
