package dev.pgworkflows.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A command that makes one request: with {@code --json} it prints the server's answer as it came,
 * otherwise it shows it for people.
 */
abstract class ApiCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** Makes the request; an error answer is thrown, not returned. */
  abstract Answer request(Api api);

  /** Shows a successful answer for people. */
  abstract void show(JsonNode answer, PrintWriter out);

  @Override
  public final Integer call() {
    Pgw pgw = (Pgw) spec.root().userObject();
    Answer answer = request(pgw.api());
    PrintWriter out = spec.commandLine().getOut();
    if (pgw.json()) {
      if (!answer.body().isBlank()) {
        out.println(answer.body());
      }
    } else {
      show(answer.json(), out);
    }
    out.flush();
    return ExitCodes.OK;
  }
}
