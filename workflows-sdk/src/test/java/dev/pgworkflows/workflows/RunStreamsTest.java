package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pgworkflows.workflows.testing.LiveServer;
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
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Streams of output written by a run's body and steps, read live through the client: in order, seen
 * while the run goes on, ending at close or at the run's end, and without duplicates when a step is
 * retried or the body is replayed after its worker was killed.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
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
    try (StreamReader<String> reader = client.stream(run, "progress", String.class)) {
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
            client.awaitResult("stream-order", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(all(client.stream(run, "progress", String.class).from(3)))
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
    assertThat(all(server.client().stream(run, "ticks", Integer.class))).containsExactly(1, 2);
    assertThat(server.client().get("stream-run-end", run.runId()).status())
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
    assertThat(all(server.client().stream(run, "out", String.class)))
        .containsExactly("a1-0", "a1-1", "a1-2", "a2-3");
    assertThat(attempts.get()).isEqualTo(2);
  }

  @Test
  void replayedBodyWritesAreNotDuplicatedAfterTheWorkerJvmIsKilledMidRun(@TempDir Path dir)
      throws Exception {
    Path marker = dir.resolve("hanging");
    WorkflowClient client = server.client();
    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                StreamsWorkflow.class.getName(),
                server.url(),
                marker.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("child.out").toFile())
            .start();
    try {
      Started run = client.start("streams-replay", "go");
      Awaitility.await().atMost(60, TimeUnit.SECONDS).until(() -> Files.exists(marker));
      child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL mid-step

      Iterator<StreamReader.Entry<String>> live =
          client.stream(run, "out", String.class).iterator();
      List<String> before = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        before.add(live.next().value());
      }
      assertThat(before).containsExactly("b0", "s1-0", "b1", "h0");

      server.serve(StreamsWorkflow.define(marker, false));
      assertThat(
              client.awaitResult(
                  "streams-replay", run.runId(), String.class, Duration.ofSeconds(60)))
          .isEqualTo("done");
      List<String> rest = new ArrayList<>();
      live.forEachRemaining(e -> rest.add(e.value()));
      assertThat(rest).containsExactly("h1", "b2");
      assertThat(all(client.stream(run, "out", String.class)))
          .containsExactly("b0", "s1-0", "b1", "h0", "h1", "b2");
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void badNamesOversizeValuesAndWritesAfterCloseFailClearly() {
    assertThatThrownBy(() -> server.client().stream("wf", 1, "bad name", String.class))
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
                .awaitResult("stream-refusals", run.runId(), String.class, Duration.ofSeconds(30)))
        .isEqualTo("ok");
    assertThat(errors).hasSize(3);
    assertThat(errors.get(0)).contains("stream name \"bad name\"");
    assertThat(errors.get(1)).contains("at most 65536 bytes");
    assertThat(errors.get(2)).startsWith("409").contains("is closed");
    assertThat(all(server.client().stream(run, "out", String.class))).containsExactly("kept");
  }

  /** The README's example, as printed there (its server's address made this test's). */
  @Test
  @SuppressWarnings({"rawtypes", "unchecked"})
  void theReadmeExampleRunsAsPrinted() {
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
    for (StreamReader.Entry<Map> e : client.stream(run, "progress", Map.class)) {
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
            WorkflowClient.connect(proxy.url()).stream(run, "out", Integer.class)) {
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
}
