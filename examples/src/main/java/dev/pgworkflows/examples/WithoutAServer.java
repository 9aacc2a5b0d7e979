package dev.pgworkflows.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.workflows.PgWorkflows;
import dev.pgworkflows.workflows.Started;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;

/**
 * The page docs/without-a-server.md: a workflow served, started and awaited in this process over
 * the database {@code DATABASE_URL} names (user and password in {@code PGUSER} and {@code
 * PGPASSWORD}), with no server. The body of {@link #main} is that page's block, line for line
 * (checked by a test).
 */
public final class WithoutAServer {
  private WithoutAServer() {}

  public static void main(String[] args) throws Exception {
    // docs: begin
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(System.getenv("DATABASE_URL")); // jdbc:postgresql://localhost:5432/app
    config.setUsername(System.getenv("PGUSER"));
    config.setPassword(System.getenv("PGPASSWORD"));
    Workflow<String, String> greet =
        Workflow.define("greet", String.class, String.class)
            .run(
                (ctx, name) -> {
                  String hello = ctx.step().run("hello", String.class, () -> "hello " + name);
                  ctx.step().sleep("pause", Duration.ofSeconds(1));
                  return ctx.step().run("shout", String.class, hello::toUpperCase);
                });
    try (HikariDataSource dataSource = new HikariDataSource(config);
        PgWorkflows pgw = PgWorkflows.start(dataSource)) { // migrates the schema if it is older
      pgw.serve(greet);
      Started run = pgw.client().start(greet, "ada");
      String out =
          pgw.client()
              .runs()
              .awaitResult("greet", run.runId(), String.class, Duration.ofMinutes(1));
      System.out.println("run " + run.runId() + " of greet completed: " + out);
    }
    // docs: end
  }
}
