package dev.pgworkflows.examples;

import dev.pgworkflows.workflows.Match;
import dev.pgworkflows.workflows.Retry;
import dev.pgworkflows.workflows.Workflow;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The design's onboarding workflow: create the user, wait a moment, send a welcome mail with
 * retries, then wait up to a week for the user to verify, nudging if they never do.
 *
 * <p>Run: {@code java -cp examples/target/pgworkflows-demo.jar
 * dev.pgworkflows.examples.OnboardUser} (against WORKFLOWS_URL, or an in-process server).
 */
public final class OnboardUser {
  public record Signup(String email) {}

  public record User(long id, String email) {}

  public record Verified(long userId) {}

  private static final AtomicLong ids = new AtomicLong(41);

  private OnboardUser() {}

  /** The definition; {@code welcomeDelay} is short in the demo and minutes in real life. */
  public static Workflow<Signup, Long> workflow(Duration welcomeDelay) {
    return Workflow.define("onboard-user", Signup.class, Long.class)
        .version(1)
        .retention(Duration.ofDays(30))
        .run(
            (ctx, in) -> {
              User u =
                  ctx.step()
                      .run(
                          "create-user",
                          User.class,
                          () -> new User(ids.incrementAndGet(), in.email()));
              ctx.step().sleep("welcome-delay", welcomeDelay);
              ctx.step()
                  .run(
                      "send-welcome",
                      () -> System.out.println("  [mail] welcome, " + u.email()),
                      Retry.exponential(5, Duration.ofSeconds(2)));
              Optional<Verified> v =
                  ctx.step()
                      .waitForEvent(
                          "verify", Verified.class, Match.of("userId", u.id()), Duration.ofDays(7));
              if (v.isEmpty()) {
                ctx.step()
                    .run("nudge", () -> System.out.println("  [mail] please verify, " + u.email()));
              }
              return u.id();
            });
  }

  public static void main(String[] args) throws Exception {
    try (Sandbox sandbox = Sandbox.open()) {
      Workflow<Signup, Long> onboard = workflow(Duration.ofSeconds(1));
      var worker = onboard.serve(sandbox.workerOptions());
      try {
        var client = sandbox.client();
        long run = client.start(onboard, new Signup("grace@example.com")).runId();
        System.out.println("started onboard-user run " + run);
        Sandbox.awaitWaiting(client, "onboard-user", run);
        System.out.println("run " + run + " waits for \"verify\"; signalling it");
        client.signal(
            "onboard-user",
            run,
            "verify",
            new Verified(
                client.runs().steps("onboard-user", run).get(0).output().get("id").asLong()));
        Long id =
            client.runs().awaitResult("onboard-user", run, Long.class, Duration.ofSeconds(30));
        System.out.println("run " + run + " completed with user id " + id);
      } finally {
        worker.close();
      }
    }
  }
}
