package dev.pgworkflows.reliability;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.workflows.PgWorkflows;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;

/**
 * The scale-out test's workflow: three steps whose result proves each ran on its predecessor's
 * answer, {@code (n + 1) * 2 + 3}; the middle one takes 100 ms so that a killed worker is likely to
 * die inside it. As a main it serves the workflow until killed, over HTTP ({@code http <url>}) or
 * over JDBC with the engine in its own process ({@code jdbc <url> <user> <password>}).
 */
public final class ScaleOutWorkflow {
  static final String NAME = "scale-out";
  static final Duration LEASE = Duration.ofSeconds(3);

  private ScaleOutWorkflow() {}

  static Workflow<Integer, Integer> define() {
    return Workflow.define(NAME, Integer.class, Integer.class)
        .run(
            (ctx, n) -> {
              int a = ctx.step().run("a", Integer.class, () -> n + 1);
              int b =
                  ctx.step()
                      .run(
                          "b",
                          Integer.class,
                          () -> {
                            Thread.sleep(100);
                            return a * 2;
                          });
              return ctx.step().run("c", Integer.class, () -> b + 3);
            });
  }

  static int expected(int n) {
    return (n + 1) * 2 + 3;
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("http")) {
      define()
          .serve(
              WorkerOptions.url(args[1])
                  .pollWait(Duration.ofSeconds(1))
                  .lease(LEASE)
                  .concurrency(16));
    } else {
      HikariConfig c = new HikariConfig();
      c.setJdbcUrl(args[1]);
      c.setUsername(args[2]);
      c.setPassword(args[3]);
      c.setMaximumPoolSize(6);
      PgWorkflows engine = PgWorkflows.start(new HikariDataSource(c));
      engine.serve(
          define(), WorkerOptions.dataSource(engine.dataSource()).lease(LEASE).concurrency(16));
    }
    System.out.println("serving");
    Thread.sleep(Long.MAX_VALUE);
  }
}
