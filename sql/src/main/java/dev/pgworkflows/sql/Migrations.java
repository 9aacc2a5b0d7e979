package dev.pgworkflows.sql;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The schema migrations shipped in this jar ({@code sql/schema/}), in version order. */
public final class Migrations {
  static final String DIRECTORY = "db/schema/";

  private Migrations() {}

  /**
   * Every shipped migration, ordered by version; versions are unique and start at 1 without gaps.
   */
  public static List<Migration> shipped() {
    List<Migration> all = new ArrayList<>();
    for (String name : SqlResources.index(DIRECTORY)) {
      all.add(Migration.of(name, SqlResources.read(DIRECTORY, name)));
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
}
