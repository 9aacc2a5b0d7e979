package dev.pgworkflows.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.testing.LiveServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the SDK tells about runs and workers: why a run is not running (its blockers), and the
 * workers serving a workflow, which a worker names itself to and leaves as it closes.
 */
class RunInsightTest {
  @RegisterExtension static final LiveServer server = new LiveServer();

  @Test
  void aWaitingRunsBlockerAndItsStreamingWorkerAreVisibleUntilTheWorkerCloses() {
    Workflow<String, String> wf =
        Workflow.define("insight", String.class, String.class)
            .run(
                (ctx, in) ->
                    ctx.step()
                        .waitForEvent("go", String.class, Match.any(), Duration.ofHours(1))
                        .orElse("timed out"));
    Worker worker =
        server.serve(
            wf, WorkerOptions.url(server.url()).pollWait(Duration.ofSeconds(2)).concurrency(4));
    Started run = server.client().start(wf, "x");
    server.client().signal("insight", run.runId(), "stop", "not this one");

    Awaitility.await()
        .atMost(30, TimeUnit.SECONDS)
        .until(
            () ->
                server.client().runs().blockers(run.workflow(), run.runId()).stream()
                    .anyMatch(b -> b.kind().equals("waiting")));
    Blocker waiting = server.client().runs().blockers(run.workflow(), run.runId()).get(0);
    assertThat(waiting.kind()).isEqualTo("waiting");
    assertThat(waiting.text()).contains("\"go\"");
    assertThat(waiting.data()).containsEntry("event", "go").containsKey("until");
    assertThat((List<?>) waiting.data().get("unmatched")).hasSize(1);

    List<WorkerInfo> listed =
        Awaitility.await()
            .atMost(30, TimeUnit.SECONDS)
            .until(() -> server.client().workers("insight"), l -> l.size() == 1);
    WorkerInfo w = listed.get(0);
    assertThat(w.id()).contains("-" + ProcessHandle.current().pid() + "-");
    assertThat(w.workflow()).isEqualTo("insight");
    assertThat(w.versions()).containsExactly("1");
    assertThat(w.slots()).isEqualTo(4);
    assertThat(w.mode()).isEqualTo("stream");
    assertThat(server.client().workers()).extracting(WorkerInfo::id).contains(w.id());

    worker.close();
    Awaitility.await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> server.client().workers("insight").isEmpty());
  }
}
