package dev.pgworkflows.workflows;

import dev.pgworkflows.workflows.internal.replay.CompletionHook;
import dev.pgworkflows.workflows.internal.worker.Definition;
import dev.pgworkflows.workflows.internal.worker.TaskWorker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A three-step workflow that records each step execution in a file, so a test can count executions
 * across processes. With {@code hang} set, step "two" blocks forever: the process is meant to be
 * killed there.
 */
public final class CrashyWorkflow {
  private CrashyWorkflow() {}

  public static Workflow<String, String> define(Path log, boolean hang) {
    return Workflow.define("crashy", String.class, String.class)
        .run(
            (ctx, in) -> {
              String a = ctx.step().run("one", String.class, () -> record(log, "one"));
              String b =
                  ctx.step()
                      .run(
                          "two",
                          String.class,
                          () -> {
                            record(log, "two");
                            if (hang) {
                              Thread.sleep(Long.MAX_VALUE);
                            }
                            return "2";
                          });
              String c = ctx.step().run("three", String.class, () -> record(log, "three"));
              return a + b + c;
            });
  }

  static String record(Path log, String step) throws IOException {
    Files.writeString(
        log,
        step + "\n",
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND,
        StandardOpenOption.SYNC);
    return step.substring(0, 1);
  }

  /**
   * Child process: serves the workflow with a short lease until killed. With the system property
   * {@value #CRASH_AT} set to {@code after-step:<name>} it halts once step {@code name} returned
   * but before its completion is sent; with {@code after-commit:<name>}, right after the completion
   * committed.
   */
  public static void main(String[] args) throws Exception {
    Workflow<String, String> wf =
        define(Path.of(args[1]), args.length < 3 || !args[2].equals("nohang"));
    // An http:// address is a server's; a jdbc: URL (user and password
    // in PGW_TEST_USER and PGW_TEST_PASSWORD) is the database's, served with no server between.
    WorkerOptions options =
        args[0].startsWith("jdbc:")
            ? WorkerOptions.dataSource(dataSource(args[0]))
            : WorkerOptions.url(args[0]).pollWait(Duration.ofSeconds(1));
    TaskWorker.start(
        new Definition<>(wf.name(), wf.version(), wf.inputType(), wf.body()),
        options.lease(Duration.ofSeconds(2)),
        haltAt(System.getProperty(CRASH_AT)));
    Thread.sleep(Long.MAX_VALUE);
  }

  private static javax.sql.DataSource dataSource(String url) {
    org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
    ds.setUrl(url);
    ds.setUser(System.getenv("PGW_TEST_USER"));
    ds.setPassword(System.getenv("PGW_TEST_PASSWORD"));
    return ds;
  }

  /** The system property naming the point where the child halts. */
  public static final String CRASH_AT = "pgworkflows.test.crashAt";

  /** A hook that halts the JVM (exit status 137) at {@code point}, or none when it is null. */
  static CompletionHook haltAt(String point) {
    if (point == null) {
      return CompletionHook.NONE;
    }
    return new CompletionHook() {
      @Override
      public void stepReturned(String step) {
        haltIf("after-step:" + step);
      }

      @Override
      public void completionCommitted(String step) {
        haltIf("after-commit:" + step);
      }

      private void haltIf(String here) {
        if (point.equals(here)) {
          Runtime.getRuntime().halt(137);
        }
      }
    };
  }
}
