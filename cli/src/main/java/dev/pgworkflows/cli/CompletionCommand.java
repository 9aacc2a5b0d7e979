package dev.pgworkflows.cli;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code pgw completion}: a bash completion script for every command and option. */
@Command(
    name = "completion",
    description = {
      "Print a bash completion script (zsh too, after `autoload -U bashcompinit && bashcompinit`).",
      "Use it with: source <(pgw completion)"
    })
final class CompletionCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().getOut().print(AutoComplete.bash("pgw", spec.root().commandLine()));
    spec.commandLine().getOut().flush();
    return ExitCodes.OK;
  }
}
