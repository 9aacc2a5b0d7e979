package dev.pgworkflows.sql;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One forward-only schema migration file, {@code V<version>__<name>.sql}. */
public record Migration(int version, String fileName, String sql) {
  private static final Pattern FILE_NAME = Pattern.compile("V(\\d{3,})__([a-z0-9_]+)\\.sql");

  public Migration {
    if (version < 1) {
      throw new IllegalArgumentException("migration version must be >= 1, got " + version);
    }
    if (sql == null || sql.isBlank()) {
      throw new IllegalArgumentException("migration " + fileName + " is empty");
    }
  }

  /** Parses the version out of a file name such as {@code V001__baseline.sql}. */
  public static Migration of(String fileName, String sql) {
    Matcher m = FILE_NAME.matcher(fileName);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "migration file name " + fileName + " does not match V<number>__<name>.sql");
    }
    return new Migration(Integer.parseInt(m.group(1)), fileName, sql);
  }

  /** SHA-256 of the script, so an edited released migration is noticed. */
  public String checksum() {
    return SqlResources.sha256(sql);
  }
}
