package dev.pgworkflows.cli;

import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.UnmatchedArgumentException;

/** {@code pgw}: workflows, runs, queues and topics of a pgworkflows server, over its REST API. */
@Command(
    name = "pgw",
    description = "Workflows, runs, queues and topics of a pgworkflows server, over its REST API.",
    synopsisSubcommandLabel = "COMMAND",
    subcommands = {
      WorkflowsCommand.class,
      RunsCommand.class,
      WorkersCommand.class,
      QueuesCommand.class,
      TopicsCommand.class,
      SchedulesCommand.class,
      AttributesCommand.class,
      BatchCommand.class,
      AuditCommand.class,
      RateLimitCommand.class,
      JournalsCommand.class,
      CallbacksCommand.class,
      CompletionCommand.class
    },
    footerHeading = "%nEnvironment:%n",
    footer = {
      "  WORKFLOWS_URL    the server (default " + Pgw.DEFAULT_URL + ")",
      "  WORKFLOWS_TOKEN  the bearer token; --url and --token take precedence"
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:ok",
      "1:the server refused the request (a 4xx other than those below)",
      "2:usage error: unknown command or option, a missing or malformed argument",
      "3:not found (404)",
      "4:conflict (409): the thing is not in a state that allows it",
      "5:unauthorized or forbidden (401, 403): a missing, unknown or too weak token",
      "6:cannot reach the server, or it failed (5xx)"
    })
public final class Pgw {
  static final String DEFAULT_URL = "http://localhost:7700";

  private final Map<String, String> env;

  @Option(
      names = "--url",
      paramLabel = "URL",
      scope = ScopeType.INHERIT,
      description = "The server's address (default: $WORKFLOWS_URL).")
  String url;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      scope = ScopeType.INHERIT,
      description = "The bearer token (default: $WORKFLOWS_TOKEN).")
  String token;

  @Option(
      names = "--json",
      scope = ScopeType.INHERIT,
      description = "Print the server's JSON answer as it came, for scripts.")
  boolean json;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      scope = ScopeType.INHERIT,
      description = "Show this help and exit.")
  boolean help;

  Pgw(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  public static void main(String[] args) {
    System.exit(commandLine(System.getenv()).execute(args));
  }

  /** The command line with this environment, ready to {@code execute}. */
  static CommandLine commandLine(Map<String, String> env) {
    Pgw pgw = new Pgw(env);
    CommandLine cli = new CommandLine(pgw);
    cli.setExecutionExceptionHandler(pgw::failed);
    cli.setParameterExceptionHandler(Pgw::misused);
    return cli;
  }

  Api api() {
    return new Api(
        BadServerAddress.check(serverUrl(), url != null ? "--url" : "WORKFLOWS_URL"), token());
  }

  boolean json() {
    return json;
  }

  String serverUrl() {
    if (url != null) {
      return url;
    }
    String fromEnv = env.get("WORKFLOWS_URL");
    return fromEnv == null || fromEnv.isBlank() ? DEFAULT_URL : fromEnv;
  }

  private String token() {
    return token != null ? token : env.get("WORKFLOWS_TOKEN");
  }

  /**
   * A usage error: the problem on one line and where to read more, or the usage of a command group
   * given no command.
   */
  private static int misused(ParameterException e, String[] args) {
    CommandLine cli = e.getCommandLine();
    PrintWriter err = cli.getErr();
    err.println("pgw: " + e.getMessage());
    if (!UnmatchedArgumentException.printSuggestions(e, err)) {
      if (!cli.getSubcommands().isEmpty() && !(e instanceof MissingParameterException)) {
        cli.usage(err);
      } else {
        err.println("see: " + cli.getCommandSpec().qualifiedName() + " --help");
      }
    }
    err.flush();
    return ExitCodes.USAGE;
  }

  private int failed(Exception e, CommandLine cli, ParseResult parsed) {
    PrintWriter err = cli.getErr();
    int code;
    if (e instanceof ServerAnswered answered) {
      String hint =
          answered.status() == 401 && (token() == null || token().isEmpty())
              ? " (no token given: set WORKFLOWS_TOKEN or --token)"
              : "";
      err.println("pgw: " + answered.getMessage() + hint);
      code = answered.exitCode();
    } else if (e instanceof ServerUnreachable) {
      err.println("pgw: " + e.getMessage());
      code = ExitCodes.UNREACHABLE;
    } else if (e instanceof BadServerAddress) {
      err.println("pgw: " + e.getMessage());
      code = ExitCodes.USAGE;
    } else {
      err.println("pgw: " + e);
      code = ExitCodes.SERVER_ERROR;
    }
    err.flush();
    return code;
  }
}
