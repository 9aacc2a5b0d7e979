package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.FlowStore;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workflows whose runs stick to their worker, as last read ({@code queue.sticky_workflows}): a
 * poll of such a workflow is a kind of its own for its worker (see {@link PollTerms#waitKey}),
 * since the runs sticking to that worker are its alone. Other polls of the same versions are one
 * kind, whichever worker makes them, which spares each wake-up a receive per worker. Read again
 * every few seconds and whenever this process sets a routing; a poll made before a new sticky
 * setting is read is only slower to find a sticky run's task (at its next wake-up).
 */
public final class StickyWorkflows {
  private static final Logger log = LoggerFactory.getLogger(StickyWorkflows.class);

  private final FlowStore store;
  private volatile Set<String> names = Set.of();

  public StickyWorkflows(FlowStore store) {
    this.store = store;
  }

  /** Whether runs of {@code workflow} stick to their worker. */
  public boolean contains(String workflow) {
    Set<String> n = names;
    return !n.isEmpty() && n.contains(workflow);
  }

  /** Reads the sticky workflows again; a failure keeps what was read before. */
  public void refresh() {
    try {
      names = Set.copyOf(store.stickyWorkflows());
    } catch (RuntimeException e) {
      log.debug("sticky workflows not read again: {}", e.toString());
    }
  }
}
