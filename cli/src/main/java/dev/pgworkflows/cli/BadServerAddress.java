package dev.pgworkflows.cli;

import java.net.URI;
import java.util.Locale;

/** A server address that is not an http or https URL with a host: a usage error. */
final class BadServerAddress extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private BadServerAddress(String message) {
    super(message);
  }

  /** The address, if it is an http or https URL with a host; {@code from} names where it came. */
  static String check(String address, String from) {
    URI uri;
    try {
      uri = URI.create(address);
    } catch (IllegalArgumentException e) {
      throw refused(address, from);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
      throw refused(address, from);
    }
    return address;
  }

  private static BadServerAddress refused(String address, String from) {
    return new BadServerAddress(
        from + " must be an http:// or https:// URL with a host, not \"" + address + "\"");
  }
}
