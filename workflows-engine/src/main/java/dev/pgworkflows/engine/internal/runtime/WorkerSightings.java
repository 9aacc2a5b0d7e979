package dev.pgworkflows.engine.internal.runtime;

import dev.pgworkflows.engine.internal.store.WorkerStore.Gone;
import dev.pgworkflows.engine.internal.store.WorkerStore.Seen;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The workers this server sees, in memory: a poll or a stream marks its worker seen, for as long as
 * it is open and when it ends. A background job writes {@link #snapshot() snapshots} every few
 * seconds, so the poll path pays a map lookup and two counter updates. A worker seen for the first
 * time, or with other versions or labels than before, is handed to the {@link #onNews listener} at
 * once (the registry writes it before the poll waits), so every server counts it from its first
 * poll.
 */
public final class WorkerSightings {
  private record Key(String id, String workflow) {}

  /** What a worker said of itself when last seen; replaced whole, never half written. */
  private record Details(
      String host,
      List<Integer> versions,
      Integer slots,
      String mode,
      Map<String, String> labels) {}

  /** A worker's latest sighting; open counts its polls and streams in flight. */
  public static final class Sighting {
    private final Key key;
    private final AtomicInteger open = new AtomicInteger();
    private volatile Details details;
    private volatile long seenNanos;

    private Sighting(Key key, Details details) {
      this.key = key;
      this.details = details;
      this.seenNanos = System.nanoTime();
    }

    /** The poll or stream that marked it seen has ended: seen until now. */
    public void done() {
      seenNanos = System.nanoTime();
      open.decrementAndGet();
    }
  }

  private final Map<Key, Sighting> seen = new ConcurrentHashMap<>();
  private volatile Consumer<Seen> news = s -> {};
  private final ConcurrentLinkedQueue<Gone> gone = new ConcurrentLinkedQueue<>();
  private final long expiryNanos;

  /** Forgets a worker not seen for {@code expiryMs}. */
  public WorkerSightings(long expiryMs) {
    this.expiryNanos = expiryMs * 1_000_000L;
  }

  /**
   * Marks a worker of {@code workflow} seen by a poll or a stream ({@code mode}) that begins now;
   * the caller calls {@link Sighting#done()} when it ends.
   */
  public Sighting begin(
      String workflow, WorkerIdentity who, List<Integer> versions, Integer slots, String mode) {
    Integer n = slots != null ? slots : who.slots();
    boolean[] created = {false};
    Sighting s =
        seen.computeIfAbsent(
            new Key(who.id(), workflow),
            k -> {
              created[0] = true;
              return new Sighting(
                  k, new Details(who.host(), List.copyOf(versions), n, mode, who.labels()));
            });
    s.open.incrementAndGet();
    Details d = s.details;
    Integer keptSlots = n != null ? n : d.slots();
    // Other versions or labels change which runs the worker takes: news, as a first sighting is.
    boolean changed = !versions.equals(d.versions()) || !who.labels().equals(d.labels());
    if (!who.host().equals(d.host())
        || changed
        || !Objects.equals(keptSlots, d.slots())
        || !mode.equals(d.mode())) {
      s.details = new Details(who.host(), List.copyOf(versions), keptSlots, mode, who.labels());
    }
    s.seenNanos = System.nanoTime();
    if (created[0] || changed) {
      Details now = s.details;
      news.accept(
          new Seen(
              s.key.id(),
              s.key.workflow(),
              now.host(),
              now.versions(),
              now.slots(),
              now.mode(),
              0,
              now.labels()));
    }
    return s;
  }

  /**
   * Hands each worker seen for the first time, or with other versions or labels, to {@code
   * listener} as it is seen, on the poll's or the stream's thread (which waits for it).
   */
  public void onNews(Consumer<Seen> listener) {
    this.news = listener;
  }

  /**
   * A worker that said goodbye (it ended its stream as it closes): forgotten here, and its row
   * deleted with the next report.
   */
  public void goodbye(String workflow, String id) {
    if (seen.remove(new Key(id, workflow)) != null) {
      gone.add(new Gone(id, workflow));
    }
  }

  /** What to report now: every worker seen within the expiry (those in flight seen now). */
  public List<Seen> snapshot() {
    long now = System.nanoTime();
    List<Seen> out = new ArrayList<>(seen.size());
    for (Sighting s : seen.values()) {
      boolean open = s.open.get() > 0;
      long ago = open ? 0 : now - s.seenNanos;
      if (!open && ago > expiryNanos) {
        seen.remove(s.key, s);
        continue;
      }
      Details d = s.details;
      out.add(
          new Seen(
              s.key.id(),
              s.key.workflow(),
              d.host(),
              d.versions(),
              d.slots(),
              d.mode(),
              ago / 1_000_000,
              d.labels()));
    }
    return out;
  }

  /** The goodbyes since the last call. */
  public List<Gone> drainGone() {
    List<Gone> out = new ArrayList<>();
    for (Gone g; (g = gone.poll()) != null; ) {
      out.add(g);
    }
    return out;
  }

  /** Every worker this server holds, as goodbyes: what it forgets as it stops. */
  public List<Gone> all() {
    List<Gone> out = drainGone();
    seen.keySet().forEach(k -> out.add(new Gone(k.id(), k.workflow())));
    return out;
  }
}
