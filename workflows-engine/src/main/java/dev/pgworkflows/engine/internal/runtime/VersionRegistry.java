package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.TaskStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Registers the versions workers poll for (a start without a version takes the newest), at most
 * once a minute per workflow and list of versions rather than on every poll.
 */
public final class VersionRegistry {
  private static final long REGISTER_EVERY_MS = 60_000;

  private final TaskStore store;
  private final Map<String, Long> registered = new ConcurrentHashMap<>();

  public VersionRegistry(TaskStore store) {
    this.store = store;
  }

  public void register(String name, List<Integer> versions) {
    String key = name + versions;
    long now = System.currentTimeMillis();
    Long last = registered.get(key);
    if (last == null || now - last > REGISTER_EVERY_MS) {
      store.registerVersions(name, versions);
      registered.put(key, now);
    }
  }
}
