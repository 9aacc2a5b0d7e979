package dev.pgworkflows.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pgworkflows.workflows.RunInfo;
import dev.pgworkflows.workflows.RunStatus;
import dev.pgworkflows.workflows.StepInfo;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A steady load on {@link FaultWorkflow} while faults come and go: a start every 150 ms and a
 * signal for every started run, each retried until acknowledged. It keeps what was acknowledged, so
 * a test can check that every acknowledged start finished with its acknowledged signal's payload.
 */
final class FaultWorkload implements AutoCloseable {
  private final WorkflowClient client;
  private final Map<Long, Integer> started = new ConcurrentHashMap<>();
  private final Set<Long> signalled = ConcurrentHashMap.newKeySet();
  private final AtomicInteger refused = new AtomicInteger();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicBoolean starting = new AtomicBoolean(true);
  private final List<Thread> threads = new ArrayList<>();

  FaultWorkload(WorkflowClient client) {
    this.client = client;
    threads.add(loop("fault-starts", 150, this::startOne));
    threads.add(loop("fault-signals", 100, this::signalAll));
  }

  private Thread loop(String name, long everyMs, Runnable r) {
    Thread t =
        new Thread(
            () -> {
              while (running.get()) {
                r.run();
                try {
                  Thread.sleep(everyMs);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private int n;

  private void startOne() {
    if (!starting.get()) {
      return;
    }
    int i = ++n;
    try {
      started.put(client.start(FaultWorkflow.NAME, i).runId(), i);
    } catch (RuntimeException e) {
      refused.incrementAndGet(); // not acknowledged: not counted
    }
  }

  private void signalAll() {
    for (Map.Entry<Long, Integer> e : started.entrySet()) {
      if (!running.get() || signalled.contains(e.getKey())) {
        continue;
      }
      try {
        client.signal(FaultWorkflow.NAME, e.getKey(), "go", new FaultWorkflow.Go(7 * e.getValue()));
        signalled.add(e.getKey());
      } catch (RuntimeException ex) {
        refused.incrementAndGet(); // tried again next round
      }
    }
  }

  /** The runs acknowledged so far. */
  Set<Long> acknowledged() {
    return new HashSet<>(started.keySet());
  }

  int refusals() {
    return refused.get();
  }

  /**
   * Waits until every run of {@code runs} has completed, its signal acknowledged; returns how long
   * that took, or fails after {@code bound}.
   */
  long awaitFinished(Set<Long> runs, Duration bound) throws InterruptedException {
    long t0 = System.nanoTime();
    long deadline = t0 + bound.toNanos();
    Set<Long> pending = new HashSet<>(runs);
    while (!pending.isEmpty()) {
      for (Long id : new ArrayList<>(pending)) {
        try {
          if (signalled.contains(id)
              && client.runs().get(FaultWorkflow.NAME, id).status() == RunStatus.COMPLETED) {
            pending.remove(id);
          }
        } catch (RuntimeException e) {
          // asked again next round
        }
      }
      if (!pending.isEmpty()) {
        assertThat(System.nanoTime())
            .as("runs still unfinished %s after %s: %s", pending.size(), bound, pending)
            .isLessThan(deadline);
        Thread.sleep(100);
      }
    }
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /**
   * Stops starting and signalling (signals still owed are sent first) and waits for the threads.
   */
  void stop() throws InterruptedException {
    starting.set(false);
    long deadline = System.nanoTime() + STOP_BOUND.toNanos();
    while (!signalled.containsAll(started.keySet())) {
      assertThat(System.nanoTime())
          .as("signals still owed after %s", STOP_BOUND)
          .isLessThan(deadline);
      Thread.sleep(50);
    }
    running.set(false);
    for (Thread t : threads) {
      // A request in flight ends within the client's own timeout (30 s).
      t.join(STOP_BOUND.toMillis());
      assertThat(t.isAlive()).as("%s still running after %s", t.getName(), STOP_BOUND).isFalse();
    }
  }

  /** How long stopping may take: the signals owed, then the loops' last requests. */
  private static final Duration STOP_BOUND = Duration.ofSeconds(40);

  /**
   * Every acknowledged run completed with the payload of its acknowledged signal, each step
   * journaled once.
   */
  void assertNothingLost() {
    for (Map.Entry<Long, Integer> e : started.entrySet()) {
      RunInfo run = client.runs().get(FaultWorkflow.NAME, e.getKey());
      assertThat(run.status()).as("run %d", e.getKey()).isEqualTo(RunStatus.COMPLETED);
      assertThat(run.output().asInt()).as("run %d", e.getKey()).isEqualTo(8 * e.getValue() + 1);
      List<String> steps =
          client.runs().steps(FaultWorkflow.NAME, e.getKey()).stream().map(StepInfo::name).toList();
      assertThat(steps).as("run %d", e.getKey()).doesNotHaveDuplicates().contains("a", "hold");
    }
  }

  /** Executions of the long step per run, from the shared log: [begin, end] pairs. */
  static Map<Long, List<long[]>> holds(Path log) throws IOException {
    Map<Long, List<long[]>> out = new HashMap<>();
    if (!Files.exists(log)) {
      return out;
    }
    for (String line : Files.readAllLines(log)) {
      String[] f = line.split(" ");
      if (f.length == 4 && f[0].equals("hold")) {
        out.computeIfAbsent(Long.parseLong(f[1]), k -> new ArrayList<>())
            .add(new long[] {Long.parseLong(f[2]), Long.parseLong(f[3])});
      }
    }
    return out;
  }

  @Override
  public void close() {
    running.set(false);
  }
}
