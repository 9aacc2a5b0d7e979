package dev.pgworkflows.workflows;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A workflow whose steps show in a trace: a step, a step that fails its first attempt and is
 * retried, and a wait for an event. Its {@link #main} serves it in a worker JVM whose step spans go
 * to {@code GlobalOpenTelemetry}, configured from that JVM's {@code OTEL_*} environment.
 */
public final class ExportedWorkflow {
  public static final String NAME = "exported";

  private static final AtomicInteger flakyCalls = new AtomicInteger();

  private ExportedWorkflow() {}

  public static Workflow<String, String> define() {
    return Workflow.define(NAME, String.class, String.class)
        .run(
            (ctx, in) -> {
              String fetched = ctx.step().run("fetch", String.class, () -> in + "-fetched");
              String flaky =
                  ctx.step()
                      .run(
                          "flaky",
                          String.class,
                          () -> {
                            if (flakyCalls.incrementAndGet() == 1) {
                              throw new IllegalStateException("the first attempt fails");
                            }
                            return "ok";
                          },
                          Retry.fixed(3, Duration.ofMillis(100)));
              Optional<String> approval =
                  ctx.step()
                      .waitForEvent("approve", String.class, Match.any(), Duration.ofSeconds(30));
              return fetched + "/" + flaky + "/" + approval.orElse("none");
            });
  }

  /** Child process: serves the workflow from {@code args[0]} until SIGTERM. */
  public static void main(String[] args) throws Exception {
    Worker worker = define().serve(WorkerOptions.url(args[0]).pollWait(Duration.ofSeconds(1)));
    Runtime.getRuntime().addShutdownHook(new Thread(worker::close, "worker-stop"));
    Thread.sleep(Long.MAX_VALUE);
  }
}
