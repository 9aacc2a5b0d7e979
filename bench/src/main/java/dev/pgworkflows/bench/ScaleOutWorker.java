package dev.pgworkflows.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;

/**
 * {@link ScaleOut}'s worker process: serves the three-step workflow {@code bench3} (steps that do
 * no work, as the benchmark's) with concurrency 96 until killed, through a server ({@code http
 * <url>}) or with the engine in this process over a pool of 20 connections ({@code jdbc
 * <jdbc-url>}, user and password {@code postgres}). Prints {@code serving} once it serves.
 */
public final class ScaleOutWorker {
  static final String WORKFLOW = "bench3";
  static final int CONCURRENCY = 96;

  private ScaleOutWorker() {}

  public static void main(String[] args) throws Exception {
    Ours.keepConnections();
    Workflow<Integer, Integer> three =
        Workflow.define(WORKFLOW, Integer.class, Integer.class)
            .run(
                (ctx, seq) -> {
                  ctx.step().run("a", Integer.class, () -> 1);
                  ctx.step().run("b", Integer.class, () -> 2);
                  ctx.step().run("c", Integer.class, () -> 3);
                  return seq;
                });
    WorkerOptions options;
    if (args[0].equals("http")) {
      options = WorkerOptions.url(args[1]).pollWait(Duration.ofSeconds(5));
    } else {
      HikariConfig c = new HikariConfig();
      c.setJdbcUrl(args[1]);
      c.setUsername("postgres");
      c.setPassword("postgres");
      c.setMaximumPoolSize(ScaleOut.POOL);
      c.setPoolName("scale-out-worker");
      options = WorkerOptions.dataSource(new HikariDataSource(c));
    }
    three.serve(options.concurrency(CONCURRENCY));
    System.out.println("serving");
    Thread.sleep(Long.MAX_VALUE);
  }
}
