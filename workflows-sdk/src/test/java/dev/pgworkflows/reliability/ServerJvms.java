package dev.pgworkflows.reliability;

import dev.pgworkflows.server.Main;
import dev.pgworkflows.testing.TestDatabase;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Servers in JVMs of their own on one database: this build's, or an earlier release's jar. */
final class ServerJvms {
  private ServerJvms() {}

  /** What a server on {@code port} over {@code db} is started with. */
  static Map<String, String> env(TestDatabase db, int port) {
    Map<String, String> env = new HashMap<>();
    env.put("WORKFLOWS_PORT", Integer.toString(port));
    env.put("DATABASE_URL", db.jdbcUrl());
    env.put("WORKFLOWS_DATABASE_USER", db.user());
    env.put("WORKFLOWS_DATABASE_PASSWORD", db.password());
    env.put("WORKFLOWS_DB_POOL_SIZE", "6");
    return env;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** This build's server. */
  static Process current(Path output, Map<String, String> env) throws IOException {
    return ChildJvm.start(Main.class, output, env);
  }

  /** A release's server, from its jar. */
  static Process release(Path jar, Path output, Map<String, String> env) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-jar");
    cmd.add(jar.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()));
    pb.environment().putAll(env);
    return pb.start();
  }

  /** SIGTERM, as a deploy stops a server, and waits up to 60 s for it to be gone. */
  static void stop(Process p) throws InterruptedException {
    p.destroy();
    if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
      ChildJvm.kill(p);
      throw new IllegalStateException("a server did not stop within 60 s of SIGTERM");
    }
  }
}
