package dev.pgworkflows.sql;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Reads the SQL files shipped on the class path. Each directory has an {@code index.txt} naming its
 * files in order, because a class path cannot be listed portably (directories, jars, shaded jars).
 */
final class SqlResources {
  private SqlResources() {}

  /** The file names listed in {@code directory/index.txt}, in order. */
  static List<String> index(String directory) {
    List<String> names = new ArrayList<>();
    for (String line : read(directory, "index.txt").split("\n")) {
      String name = line.strip();
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    return names;
  }

  static String read(String directory, String name) {
    String path = directory + name;
    try (InputStream in = SqlResources.class.getClassLoader().getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing class path resource " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SHA-256 of a script, hex encoded: how the Migrator notices an edited file. */
  static String sha256(String text) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
