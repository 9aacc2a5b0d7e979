package dev.pgworkflows.server;

import dev.pgworkflows.testing.TestDatabase;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;

/** A live server on a random port over a fresh test database. */
public final class TestServer implements AutoCloseable {
  /** The bearer token {@link #api()} sends. */
  public static final String TOKEN = "test-token";

  private final QueueServer server;
  private final TestDatabase db;

  private TestServer(QueueServer server, TestDatabase db) {
    this.server = server;
    this.db = db;
  }

  public static TestServer start() {
    return start(TestDatabase.fresh(), Map.of());
  }

  public static TestServer start(Map<String, String> env) {
    return start(TestDatabase.fresh(), env);
  }

  /** A server on an existing database, e.g. a second server sharing the first one's. */
  public static TestServer start(TestDatabase db, Map<String, String> env) {
    return start(db, env, InstantSource.system());
  }

  /** A server on an existing database that reads wall-clock time from {@code clock}. */
  public static TestServer start(TestDatabase db, Map<String, String> env, InstantSource clock) {
    Map<String, String> all = new HashMap<>();
    all.put("WORKFLOWS_PORT", "0");
    all.put("WORKFLOWS_DB_POOL_SIZE", "8");
    all.putAll(env);
    ServerConfig config =
        ServerConfig.from(all).withDatabase(db.jdbcUrl(), db.user(), db.password());
    return new TestServer(QueueServer.builder(config).clock(clock).start(), db);
  }

  public String url() {
    return "http://localhost:" + server.port();
  }

  public QueueServer server() {
    return server;
  }

  public TestDatabase database() {
    return db;
  }

  public Api api() {
    return new Api(url(), TOKEN);
  }

  @Override
  public void close() {
    server.close();
  }
}
