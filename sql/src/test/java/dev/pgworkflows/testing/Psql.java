package dev.pgworkflows.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/** Debian's psql, which tests that run SQL or scripts as printed need (CI installs it). */
public final class Psql {
  private Psql() {}

  /** Whether {@code psql} is on the PATH. */
  public static boolean installed() {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "psql"))) {
        return true;
      }
    }
    return false;
  }
}
