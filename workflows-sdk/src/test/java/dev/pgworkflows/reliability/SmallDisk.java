package dev.pgworkflows.reliability;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A filesystem of its own for a database, small enough to fill: a tmpfs of a given size mounted on
 * a new directory (which takes root, or the capability to mount). {@link #fill()} writes a file
 * until no space is left; {@link #free()} deletes it.
 */
final class SmallDisk implements AutoCloseable {
  private final Path mountPoint;
  private final Path filler;

  private SmallDisk(Path mountPoint) {
    this.mountPoint = mountPoint;
    this.filler = mountPoint.resolve("filler");
  }

  /** Mounts a tmpfs of {@code megabytes} on a new directory; fails when mounting is not allowed. */
  static SmallDisk mount(int megabytes) throws IOException {
    Path dir = Files.createTempDirectory("pgwf-small-disk");
    run("mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs", dir.toString());
    return new SmallDisk(dir);
  }

  Path path() {
    return mountPoint;
  }

  /** Writes a file until the filesystem is full; returns the bytes it took. */
  long fill() throws IOException {
    byte[] chunk = new byte[64 * 1024];
    long written = 0;
    try (OutputStream out = Files.newOutputStream(filler)) {
      while (true) {
        out.write(chunk);
        written += chunk.length;
      }
    } catch (IOException e) {
      if (!String.valueOf(e.getMessage()).contains("No space left")) {
        throw e;
      }
    }
    return written;
  }

  /** Deletes what {@link #fill()} wrote. */
  void free() throws IOException {
    Files.deleteIfExists(filler);
  }

  @Override
  public void close() throws IOException {
    try {
      run("umount", mountPoint.toString());
    } catch (IOException e) {
      run("umount", "-l", mountPoint.toString()); // a process still holds a file there
    }
    Files.deleteIfExists(mountPoint);
  }

  private static void run(String... command) throws IOException {
    Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    boolean ended;
    try {
      ended = p.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(String.join(" ", command) + " interrupted", e);
    }
    if (!ended || p.exitValue() != 0) {
      String said = new String(p.getInputStream().readAllBytes());
      throw new IOException(String.join(" ", command) + " failed: " + said.strip());
    }
  }
}
