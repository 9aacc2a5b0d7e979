package dev.pgworkflows.workflows;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Jobs of many tenants under one total limit of two, tenant "b" weighing 2: each job's one step
 * records "tenant id" in a file as it begins, and takes 200 ms, so a test sees from the worker's
 * side in which order the keys were served.
 */
public final class TenantJobsWorkflow {
  private TenantJobsWorkflow() {}

  record Job(String tenant, int id) {}

  static Workflow<Job, Integer> define(Path log) {
    return Workflow.define("tenant-jobs", Job.class, Integer.class)
        .concurrency(Concurrency.limit(100).total(2).weights(Map.of("b", 2)))
        .run(
            (ctx, job) ->
                ctx.step()
                    .run(
                        "work",
                        Integer.class,
                        () -> {
                          CrashyWorkflow.record(log, job.tenant() + " " + job.id());
                          Thread.sleep(200);
                          return job.id();
                        }));
  }

  /** Child process: serves the workflow at {@code args[0]}, recording to {@code args[1]}. */
  public static void main(String[] args) throws Exception {
    define(Path.of(args[1]))
        .serve(WorkerOptions.url(args[0]).pollWait(Duration.ofSeconds(1)).concurrency(8));
    Thread.sleep(Long.MAX_VALUE);
  }
}
