package dev.pgworkflows.cli;

/** The exit codes of {@code pgw}, the same for every command. */
final class ExitCodes {
  static final int OK = 0;
  static final int SERVER_ERROR = 1;
  static final int USAGE = 2;
  static final int NOT_FOUND = 3;
  static final int CONFLICT = 4;
  static final int UNAUTHORIZED = 5;
  static final int UNREACHABLE = 6;

  private ExitCodes() {}
}
