package dev.pgworkflows.sql;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The migrations shipped in this jar, in version order. {@code db/migration/index.txt} names the
 * files because a class path cannot be listed portably (plain directories, jars, shaded jars).
 */
public final class Migrations {
  static final String DIRECTORY = "db/migration/";

  private Migrations() {}

  /**
   * Every shipped migration, ordered by version; versions are unique and start at 1 without gaps.
   */
  public static List<Migration> shipped() {
    List<Migration> all = new ArrayList<>();
    for (String line : read("index.txt").split("\n")) {
      String name = line.strip();
      if (!name.isEmpty()) {
        all.add(Migration.of(name, read(name)));
      }
    }
    all.sort(Comparator.comparingInt(Migration::version));
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).version() != i + 1) {
        throw new IllegalStateException(
            "migrations must be numbered 1.." + all.size() + " without gaps; found " + all);
      }
    }
    return List.copyOf(all);
  }

  /** The highest version this code knows. */
  public static int latestVersion() {
    List<Migration> all = shipped();
    return all.isEmpty() ? 0 : all.get(all.size() - 1).version();
  }

  private static String read(String name) {
    try (InputStream in = Migrations.class.getClassLoader().getResourceAsStream(DIRECTORY + name)) {
      if (in == null) {
        throw new IllegalStateException("missing class path resource " + DIRECTORY + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
