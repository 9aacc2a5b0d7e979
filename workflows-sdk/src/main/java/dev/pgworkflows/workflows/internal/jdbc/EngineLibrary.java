package dev.pgworkflows.workflows.internal.jdbc;

/**
 * Whether the engine's library is on the classpath: the SDK works over JDBC only with {@code
 * dev.pgworkflows:workflows-engine} in the application's build (the SDK does not bring it, so an
 * application that talks to a server carries no JDBC driver).
 */
public final class EngineLibrary {
  private EngineLibrary() {}

  /** Returns when the engine is there; throws naming the artifact to add when it is not. */
  public static void require() {
    try {
      Class.forName(
          "dev.pgworkflows.engine.internal.host.EngineCore",
          false,
          EngineLibrary.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(
          "working over a DataSource needs the engine: add dev.pgworkflows:workflows-engine (the"
              + " version of this SDK) to the application's dependencies");
    }
  }
}
