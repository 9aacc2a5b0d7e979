package dev.pgworkflows.protocol;

/**
 * An item of a batch that was not applied, and why.
 *
 * @param outcome always {@code rejected}
 * @param status the status a single call would have had
 */
public record Rejected(String outcome, int status, String detail) implements StartAnswer {

  public static Rejected of(int status, String detail) {
    return new Rejected("rejected", status, detail);
  }
}
