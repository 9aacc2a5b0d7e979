package dev.pgworkflows.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;

/** {@code pgw} run in this JVM with WORKFLOWS_URL and WORKFLOWS_TOKEN set, its output captured. */
final class Cli {
  private final Supplier<String> url;
  private final String token;

  Cli(Supplier<String> url, String token) {
    this.url = url;
    this.token = token;
  }

  /** What one command did. */
  record Result(int exit, String out, String err) {
    /** The output's lines. */
    List<String> lines() {
      return out.lines().toList();
    }
  }

  Result run(String... args) {
    Map<String, String> env = new HashMap<>();
    env.put("WORKFLOWS_URL", url.get());
    if (token != null) {
      env.put("WORKFLOWS_TOKEN", token);
    }
    return run(env, args);
  }

  static Result run(Map<String, String> env, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = Pgw.commandLine(env);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute(args);
    return new Result(exit, out.toString(), err.toString());
  }

  /** Runs the command and asserts it succeeded. */
  Result ok(String... args) {
    Result r = run(args);
    assertThat(r.exit()).as("exit of pgw %s: %s", String.join(" ", args), r.err()).isZero();
    assertThat(r.err()).isEmpty();
    return r;
  }

  /** Runs the command with --json, asserts it succeeded and parses what it printed. */
  JsonNode json(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--json");
    Result r = ok(all.toArray(String[]::new));
    try {
      return Json.MAPPER.readTree(r.out());
    } catch (java.io.IOException e) {
      throw new AssertionError("not JSON: " + r.out(), e);
    }
  }
}
