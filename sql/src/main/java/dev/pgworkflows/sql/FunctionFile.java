package dev.pgworkflows.sql;

import java.util.List;

/**
 * One file of {@code sql/functions/}: the current definition of every function of one area, as
 * {@code CREATE OR REPLACE FUNCTION} statements. Edited in place; the Migrator re-applies the files
 * when one of them changes.
 */
public record FunctionFile(String fileName, String sql) {
  static final String DIRECTORY = "db/functions/";

  public FunctionFile {
    if (!fileName.matches("[a-z0-9_]+\\.sql")) {
      throw new IllegalArgumentException(
          "function file name " + fileName + " does not match <area>.sql");
    }
    if (sql == null || sql.isBlank()) {
      throw new IllegalArgumentException("function file " + fileName + " is empty");
    }
  }

  /** SHA-256 of the file. */
  public String checksum() {
    return SqlResources.sha256(sql);
  }

  /** Every shipped function file, in the order they are applied. */
  public static List<FunctionFile> shipped() {
    return SqlResources.index(DIRECTORY).stream()
        .map(name -> new FunctionFile(name, SqlResources.read(DIRECTORY, name)))
        .toList();
  }
}
