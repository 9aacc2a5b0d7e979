package dev.pgworkflows.workflows;

import java.util.Locale;

/**
 * The type of a search attribute ({@link Runs#defineAttribute}): what values runs may be given and
 * how a query compares them.
 */
public enum AttributeType {
  /** One string of up to 1024 characters, compared whole ({@code =}, {@code IN}) or by prefix. */
  TEXT,
  /** Up to 100 strings of up to 256 characters; {@code tags = 'eu'} holds when one of them is. */
  KEYWORD_LIST,
  /**
   * A number, compared with {@code =}, {@code !=}, {@code <}, {@code <=}, {@code >}, {@code >=}.
   */
  NUMBER,
  BOOLEAN,
  /** An instant (an {@link java.time.Instant}; in a query an ISO 8601 date or timestamp). */
  TIME;

  /** The name the server uses: {@code text}, {@code keyword_list}... */
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  static AttributeType of(String wire) {
    return valueOf(wire.toUpperCase(Locale.ROOT));
  }
}
