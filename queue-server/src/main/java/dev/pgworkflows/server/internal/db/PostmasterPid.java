package dev.pgworkflows.server.internal.db;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code postmaster.pid} of a PostgreSQL data directory: which process runs PostgreSQL there.
 * PostgreSQL writes it at start and removes it when it stops cleanly.
 *
 * <p>A server killed outright (SIGKILL, the OOM killer) cannot stop the embedded PostgreSQL it
 * started: the postmaster lives on, holding the port and the data directory. The next server on
 * that directory stops it with a fast shutdown (what {@code pg_ctl stop -m fast} sends: open
 * transactions roll back, a checkpoint is written, nothing committed is lost) and starts PostgreSQL
 * afresh with its own settings, rather than take over a process whose settings it cannot vouch for.
 */
final class PostmasterPid {
  private static final Logger log = LoggerFactory.getLogger(PostmasterPid.class);

  /** How long a left postmaster may take over its fast shutdown (its checkpoint). */
  private static final long STOP_WAIT_SECONDS = 60;

  private PostmasterPid() {}

  /** The postmaster running on {@code pgData}, if any. */
  static Optional<ProcessHandle> running(Path pgData) {
    return pid(pgData).flatMap(ProcessHandle::of).filter(ProcessHandle::isAlive);
  }

  /**
   * Stops a postmaster left running on {@code pgData} and waits until it has gone. Call it only
   * while holding the data directory's lock: a postmaster found then has no live server.
   */
  static void stopLeftRunning(Path pgData) {
    Optional<Long> pid = pid(pgData);
    if (pid.isEmpty()) {
      return;
    }
    Optional<ProcessHandle> left = running(pgData);
    if (left.isEmpty()) {
      log.warn(
          "embedded PostgreSQL on {} did not stop cleanly (its process {} is gone): starting it"
              + " afresh; it recovers from its write-ahead log",
          pgData,
          pid.get());
      return;
    }
    ProcessHandle p = left.get();
    Optional<String> command = p.info().commandLine();
    if (command.isEmpty()) {
      // Nothing to tell it by: leave it be. If it is a postmaster, PostgreSQL refuses to start.
      log.warn(
          "{} names process {}, which may still run PostgreSQL there; could not tell",
          pgData.resolve("postmaster.pid"),
          p.pid());
      return;
    }
    if (!command.get().contains(pgData.toString())) {
      // Its number went to another process (after a reboot, say): PostgreSQL would take that
      // for a postmaster and refuse to start while it lives.
      log.warn(
          "{} names process {}, which is not a PostgreSQL on this directory: removing the stale"
              + " file",
          pgData.resolve("postmaster.pid"),
          p.pid());
      try {
        Files.deleteIfExists(pgData.resolve("postmaster.pid"));
      } catch (IOException e) {
        throw new IllegalStateException("could not remove a stale postmaster.pid in " + pgData, e);
      }
      return;
    }
    log.warn(
        "embedded PostgreSQL (pid {}) was left running on {} by a server that did not stop"
            + " (killed?): stopping it and starting afresh",
        p.pid(),
        pgData);
    fastShutdown(p);
    try {
      p.onExit().get(STOP_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "embedded PostgreSQL (pid "
              + p.pid()
              + ") left running on "
              + pgData
              + " did not stop within "
              + STOP_WAIT_SECONDS
              + " s; stop it and start the server again",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping embedded PostgreSQL", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    }
    log.info("stopped the embedded PostgreSQL (pid {}) that was left running", p.pid());
  }

  /**
   * SIGINT, PostgreSQL's fast shutdown. Java sends only SIGTERM and SIGKILL, so through the shell's
   * {@code kill} (a builtin wherever there is a shell); else SIGTERM, a smart shutdown, which waits
   * for sessions to end: those of the killed server have ended with it.
   */
  private static void fastShutdown(ProcessHandle p) {
    try {
      Process kill = new ProcessBuilder("sh", "-c", "kill -INT " + p.pid()).start();
      if (kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0) {
        return;
      }
    } catch (IOException e) {
      log.debug("could not run kill: {}", e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    p.destroy();
  }

  private static Optional<Long> pid(Path pgData) {
    try {
      List<String> lines = Files.readAllLines(pgData.resolve("postmaster.pid"));
      return lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).strip()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }
}
