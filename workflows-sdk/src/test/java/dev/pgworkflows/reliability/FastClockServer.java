package dev.pgworkflows.reliability;

import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import java.time.Instant;
import java.time.InstantSource;

/**
 * The server, configured from the environment, on a clock that runs {@code speed} times as fast as
 * the wall clock from the epoch millisecond {@code base} on (arguments: base, speed): a
 * minute-by-minute cron schedule then ticks every {@code 60 / speed} seconds. Processes started
 * with the same base share one timeline, so a restarted server finds the ticks it missed.
 */
public final class FastClockServer {
  private FastClockServer() {}

  public static void main(String[] args) {
    long base = Long.parseLong(args[0]);
    long speed = Long.parseLong(args[1]);
    InstantSource fast =
        () -> Instant.ofEpochMilli(base + (System.currentTimeMillis() - base) * speed);
    QueueServer.builder(ServerConfig.fromEnvironment()).clock(fast).start();
  }
}
