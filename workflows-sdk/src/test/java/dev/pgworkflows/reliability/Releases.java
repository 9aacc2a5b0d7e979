package dev.pgworkflows.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The earlier releases ({@code releases.txt}), and each one's server jar, built from its commit in
 * this clone's history the first time a test asks for it (under {@code target/releases/}).
 */
final class Releases {
  /** A release: its tag and the commit the tag names. */
  record Release(String tag, String commit) {
    @Override
    public String toString() {
      return tag;
    }
  }

  private Releases() {}

  static List<Release> all() throws IOException {
    List<Release> out = new ArrayList<>();
    try (InputStream in = Releases.class.getResourceAsStream("/releases.txt")) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        String l = line.strip();
        if (!l.isEmpty() && !l.startsWith("#")) {
          String[] parts = l.split("\\s+");
          out.add(new Release(parts[0], parts[1]));
        }
      }
    }
    return out;
  }

  /**
   * The release's server jar: its source taken from git ({@code git archive}) and built with its
   * own Maven wrapper (server and what it needs only, no tests), once per {@code target}.
   */
  static synchronized Path serverJar(Release r) throws IOException, InterruptedException {
    Path home = Path.of("target", "releases", r.tag()).toAbsolutePath();
    Path jar = home.resolve("src/queue-server/target/queue-server.jar");
    if (Files.exists(jar)) {
      return jar;
    }
    Path src = home.resolve("src");
    Files.createDirectories(src);
    Path repo = repositoryRoot();
    run(
        home.resolve("archive.log"),
        repo,
        20,
        "sh",
        "-c",
        "git archive --format=tar " + r.commit() + " | tar -x -C '" + src + "'");
    run(
        home.resolve("build.log"),
        src,
        15,
        "sh",
        "./mvnw",
        "-B",
        "-q",
        "package",
        "-pl",
        "queue-server",
        "-am",
        "-DskipTests",
        "-Dmaven.javadoc.skip=true",
        "-Dmaven.source.skip=true",
        "-Dspotless.check.skip=true");
    if (!Files.exists(jar)) {
      throw new IllegalStateException("building " + r + " made no " + jar);
    }
    return jar;
  }

  static Path repositoryRoot() {
    Path p = Path.of("").toAbsolutePath();
    while (p != null && !Files.exists(p.resolve(".git"))) {
      p = p.getParent();
    }
    if (p == null) {
      throw new IllegalStateException(
          "the earlier releases are built from git history; no .git above " + Path.of(""));
    }
    return p;
  }

  private static void run(Path log, Path dir, int minutes, String... command)
      throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!p.waitFor(minutes, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", command) + " ran past " + minutes + " min");
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + " failed in " + dir + ":\n" + Files.readString(log));
    }
  }
}
