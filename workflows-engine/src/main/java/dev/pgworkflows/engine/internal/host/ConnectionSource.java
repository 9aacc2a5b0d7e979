package dev.pgworkflows.engine.internal.host;

import java.sql.Connection;
import java.sql.SQLException;

/** Opens a connection the engine keeps for itself: to LISTEN, or to hold the leader's lock. */
@FunctionalInterface
public interface ConnectionSource {
  Connection open() throws SQLException;
}
