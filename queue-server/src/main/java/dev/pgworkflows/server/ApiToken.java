package dev.pgworkflows.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A bearer token the server accepts: its name (what logs and the audit trail show), its scopes, and
 * the SHA-256 digest of the token. The token itself is not kept; configuration may give only its
 * digest, so the plain token never sits in an environment file.
 *
 * @param name 1 to 64 characters of A-Z, a-z, 0-9, ".", "_", "-"
 * @param scopes what the token may do; at least one
 * @param sha256 the token's SHA-256 digest, 64 lower-case hex digits
 */
public record ApiToken(String name, Set<Scope> scopes, String sha256) {
  /** The variable tokens are configured in, for error messages. */
  public static final String VARIABLE = "WORKFLOWS_API_TOKENS";

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]{64}");

  /** {@code name:scope,scope=token} or {@code name:scope,scope=sha256:<hex>}. */
  private static final Pattern ENTRY = Pattern.compile("([^:=]*):([^=]*)=(.*)", Pattern.DOTALL);

  public ApiToken {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "token name \""
              + name
              + "\" must be 1 to 64 characters of A-Z, a-z, 0-9, \".\", \"_\" and \"-\"");
    }
    if (scopes == null || scopes.isEmpty()) {
      throw new IllegalArgumentException("token \"" + name + "\" has no scope");
    }
    scopes = Collections.unmodifiableSet(EnumSet.copyOf(scopes));
    if (sha256 == null || !HEX.matcher(sha256).matches()) {
      throw new IllegalArgumentException(
          "token \"" + name + "\": a sha256 digest is 64 hex digits");
    }
    sha256 = sha256.toLowerCase(Locale.ROOT);
  }

  /** A token given in plain text; only its digest is kept. */
  public static ApiToken plain(String name, String token, Set<Scope> scopes) {
    if (token == null || token.isBlank()) {
      throw new IllegalArgumentException("token \"" + name + "\" is empty");
    }
    return new ApiToken(name, scopes, HexFormat.of().formatHex(digest(token)));
  }

  /** The SHA-256 digest of a token as presented (its UTF-8 bytes). */
  public static byte[] digest(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Parses {@code WORKFLOWS_API_TOKENS}. Entries are separated by ";" (or new lines), each {@code
   * name:scope[,scope...]=token}, where the token is plain text or {@code sha256:<64 hex digits>}:
   *
   * <pre>{@code ci-worker:worker=3f9c...;ops:admin,read=sha256:9b74c9897bac770ffc029102a200c5de...}
   * </pre>
   *
   * A value with no ":" at all is the older form: comma-separated plain tokens, each with every
   * scope, named {@code token-1}, {@code token-2}... Blank means no tokens. Throws with a message
   * that names the variable and the entry at fault, never the token.
   */
  public static List<ApiToken> parse(String raw) {
    if (raw == null || raw.isBlank()) {
      return List.of();
    }
    List<ApiToken> tokens = new ArrayList<>();
    try {
      if (raw.indexOf(':') < 0) {
        int n = 0;
        for (String t : raw.split(",")) {
          if (!t.isBlank()) {
            tokens.add(plain("token-" + ++n, t.strip(), EnumSet.allOf(Scope.class)));
          }
        }
      } else {
        int n = 0;
        for (String entry : raw.split("[;\\n]")) {
          n++;
          if (!entry.isBlank()) {
            tokens.add(entry(entry.strip(), n));
          }
        }
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(VARIABLE + ": " + e.getMessage(), e);
    }
    Set<String> names = new HashSet<>();
    Set<String> digests = new HashSet<>();
    for (ApiToken t : tokens) {
      if (!names.add(t.name())) {
        throw new IllegalArgumentException(
            VARIABLE + ": the name \"" + t.name() + "\" is given to more than one token");
      }
      if (!digests.add(t.sha256())) {
        throw new IllegalArgumentException(
            VARIABLE + ": token \"" + t.name() + "\" is the same token as an earlier one");
      }
    }
    return List.copyOf(tokens);
  }

  private static ApiToken entry(String entry, int position) {
    Matcher m = ENTRY.matcher(entry);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "entry "
              + position
              + " is not name:scope[,scope...]=token (entries are separated by \";\")");
    }
    String name = m.group(1).strip();
    Set<Scope> scopes = EnumSet.noneOf(Scope.class);
    for (String s : m.group(2).split(",")) {
      if (!s.isBlank()) {
        try {
          scopes.add(Scope.of(s.strip()));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("token \"" + name + "\": " + e.getMessage(), e);
        }
      }
    }
    String token = m.group(3).strip();
    if (token.regionMatches(true, 0, "sha256:", 0, 7)) {
      return new ApiToken(name, scopes, token.substring(7).strip());
    }
    return plain(name, token, scopes);
  }

  /** Names and scopes only: a digest is no secret, but it has no business in logs either. */
  @Override
  public String toString() {
    return name + " " + scopes.stream().map(Scope::wire).toList();
  }
}
