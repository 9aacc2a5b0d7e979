package dev.pgworkflows.server.internal.db;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded PostgreSQL's superuser password and the {@code pg_hba.conf} that asks for it.
 *
 * <p>Every connection, local socket or TCP, authenticates with {@code scram-sha-256} as {@code
 * postgres} with a random password the server generates when it first creates the data directory.
 * The password is kept in a file beside the data directory ({@code
 * <WORKFLOWS_DATA_DIR>/pg-password}, mode 600), so the user who runs the server can connect with
 * {@code psql} and nobody else can. A new data directory never trusts anyone: {@code initdb} sets
 * the password and writes {@code scram-sha-256} rules itself. One made before passwords (its rules
 * say {@code trust}) is upgraded at its next start: see {@link EmbeddedDatabase}.
 */
final class EmbeddedPassword {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedPassword.class);

  static final String FILE_NAME = "pg-password";
  static final String METHOD = "scram-sha-256";

  private static final String ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  /** 40 of 62 symbols: 238 bits, and nothing a shell or a URL would take for syntax. */
  private static final int LENGTH = 40;

  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  /** Every authentication method a {@code pg_hba.conf} rule may name (PostgreSQL 18). */
  private static final Set<String> METHODS =
      Set.of(
          "trust",
          "reject",
          "scram-sha-256",
          "md5",
          "password",
          "gss",
          "sspi",
          "ident",
          "peer",
          "ldap",
          "radius",
          "cert",
          "pam",
          "bsd",
          "oauth");

  private EmbeddedPassword() {}

  /**
   * The password in {@code file}, made (random, owner-only, written atomically) when there is none.
   * A file others may read is made owner-only, with a warning.
   */
  static String readOrCreate(Path file) throws IOException {
    if (Files.exists(file)) {
      tightenPermissions(file);
      String password = Files.readString(file, StandardCharsets.UTF_8).strip();
      if (password.isEmpty()) {
        throw new IllegalStateException(
            file + " is empty; it should hold the embedded PostgreSQL's password");
      }
      return password;
    }
    String password = generate();
    Path dir = file.toAbsolutePath().getParent();
    Path tmp =
        posix()
            ? Files.createTempFile(dir, "." + FILE_NAME, ".tmp", ownerOnly())
            : Files.createTempFile(dir, "." + FILE_NAME, ".tmp");
    try {
      try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        out.write(StandardCharsets.UTF_8.encode(password + "\n"));
        out.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
    return password;
  }

  static String generate() {
    SecureRandom random = new SecureRandom();
    StringBuilder sb = new StringBuilder(LENGTH);
    for (int i = 0; i < LENGTH; i++) {
      sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
    }
    return sb.toString();
  }

  private static void tightenPermissions(Path file) throws IOException {
    if (!posix()) {
      return;
    }
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
    if (!OWNER_ONLY.containsAll(perms)) {
      log.warn(
          "{} was {}: others may have read the embedded PostgreSQL's password; made it rw-------",
          file,
          PosixFilePermissions.toString(perms));
      Files.setPosixFilePermissions(file, OWNER_ONLY);
    }
  }

  private static boolean posix() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
  }

  private static FileAttribute<Set<PosixFilePermission>> ownerOnly() {
    return PosixFilePermissions.asFileAttribute(OWNER_ONLY);
  }

  /** Whether a rule of {@code pgData}'s {@code pg_hba.conf} lets a connection in unasked. */
  static boolean hbaTrusts(Path pgData) throws IOException {
    Path hba = pgData.resolve("pg_hba.conf");
    if (!Files.exists(hba)) {
      return false;
    }
    for (String line : Files.readAllLines(hba, StandardCharsets.UTF_8)) {
      if (methodAt(line).filter(m -> "trust".equals(m.name)).isPresent()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Rewrites {@code pgData}'s {@code pg_hba.conf} with {@code scram-sha-256} in place of every
   * {@code trust} (other rules and comments as they were), atomically. PostgreSQL reads it at its
   * next start or reload.
   */
  static void requirePasswordInHba(Path pgData) throws IOException {
    Path hba = pgData.resolve("pg_hba.conf");
    List<String> out = new ArrayList<>();
    for (String line : Files.readAllLines(hba, StandardCharsets.UTF_8)) {
      out.add(
          methodAt(line)
              .filter(m -> "trust".equals(m.name))
              .map(m -> line.substring(0, m.start) + METHOD + line.substring(m.start + 5))
              .orElse(line));
    }
    Path tmp =
        posix()
            ? Files.createTempFile(pgData, ".pg_hba", ".tmp", ownerOnly())
            : Files.createTempFile(pgData, ".pg_hba", ".tmp");
    try {
      Files.write(tmp, out, StandardCharsets.UTF_8);
      try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        c.force(true);
      }
      Files.move(tmp, hba, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private record Method(String name, int start) {}

  /**
   * The authentication method of the rule on {@code line}, if it is one: the first known method
   * name after the database and user (and, for {@code host} rules, the address) fields.
   */
  private static Optional<Method> methodAt(String line) {
    int hash = line.indexOf('#');
    String rule = hash < 0 ? line : line.substring(0, hash);
    List<int[]> tokens = new ArrayList<>();
    int i = 0;
    while (i < rule.length()) {
      while (i < rule.length() && Character.isWhitespace(rule.charAt(i))) {
        i++;
      }
      int start = i;
      while (i < rule.length() && !Character.isWhitespace(rule.charAt(i))) {
        i++;
      }
      if (i > start) {
        tokens.add(new int[] {start, i});
      }
    }
    if (tokens.isEmpty()) {
      return Optional.empty();
    }
    String type = rule.substring(tokens.get(0)[0], tokens.get(0)[1]);
    if (type.startsWith("include")) {
      return Optional.empty();
    }
    int first = "local".equals(type) ? 3 : 4;
    for (int t = first; t < tokens.size(); t++) {
      String token = rule.substring(tokens.get(t)[0], tokens.get(t)[1]);
      if (METHODS.contains(token)) {
        return Optional.of(new Method(token, tokens.get(t)[0]));
      }
    }
    return Optional.empty();
  }
}
