package dev.pgworkflows.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbos.transact.DBOS;
import dev.dbos.transact.DBOSClient;
import dev.dbos.transact.config.DBOSConfig;
import dev.dbos.transact.workflow.Queue;
import dev.dbos.transact.workflow.WorkflowHandle;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** DBOS Transact Java, in this JVM, over its own database with the same pool size. */
final class Dbos implements Contender {
  /** The workflows, registered through a DBOS proxy. */
  public interface Flows {
    int three(int seq);

    int sleeper(int seq);
  }

  /** Implementation with DBOS annotations. */
  public static final class FlowsImpl implements Flows {
    private final DBOS dbos;
    private final Dbos owner;

    FlowsImpl(DBOS dbos, Dbos owner) {
      this.dbos = dbos;
      this.owner = owner;
    }

    @Override
    @dev.dbos.transact.workflow.Workflow(name = "three")
    public int three(int seq) {
      dbos.runStep(() -> owner.mark(seq, 1, 2), "a");
      dbos.runStep(() -> owner.mark(seq, 3, 4), "b");
      dbos.runStep(() -> owner.mark(seq, 5, 5), "c");
      return seq;
    }

    @Override
    @dev.dbos.transact.workflow.Workflow(name = "sleeper")
    public int sleeper(int seq) {
      dbos.runStep(() -> 0, "before");
      long sleptAt = System.nanoTime();
      dbos.sleep(Duration.ofSeconds(1));
      dbos.runStep(
          () -> {
            owner.overshoot.add((System.nanoTime() - sleptAt - 1_000_000_000L) / 1e6);
            return 0;
          },
          "after");
      return seq;
    }
  }

  /** How often the pre-started burn-down's queue is polled (DBOS's default is a second). */
  private static final long DRAIN_POLL_MS = 20;

  private final HikariDataSource pool;
  private final DBOSConfig config;
  private final DBOS dbos;
  private final Flows flows;
  private volatile Recorder rec = new Recorder();
  final ConcurrentLinkedQueue<Double> overshoot = new ConcurrentLinkedQueue<>();
  private final AtomicInteger seqs = new AtomicInteger();

  Dbos(Pg pg, int poolSize) throws Exception {
    String db = pg.freshDatabase("dbos");
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(pg.jdbcUrl(db));
    hc.setUsername("postgres");
    hc.setPassword("postgres");
    hc.setMaximumPoolSize(poolSize);
    pool = new HikariDataSource(hc);
    config =
        DBOSConfig.defaults("bench")
            .withDatabaseUrl(pg.jdbcUrl(db))
            .withDbUser("postgres")
            .withDbPassword("postgres")
            .withDataSource(pool);
    dbos = new DBOS(config);
    flows = dbos.registerProxy(Flows.class, new FlowsImpl(dbos, this));
    dbos.launch();
  }

  int mark(int seq, int start, int end) {
    Recorder r = rec;
    r.mark(seq, start);
    r.mark(seq, end);
    return start;
  }

  @Override
  public String name() {
    return "DBOS";
  }

  @Override
  public double burnDown(int n) throws Exception {
    rec = new Recorder();
    ExecutorService starters = Executors.newFixedThreadPool(8);
    try {
      long t0 = System.nanoTime();
      List<CompletableFuture<WorkflowHandle<Integer, RuntimeException>>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int seq = seqs.incrementAndGet();
        fs.add(
            CompletableFuture.supplyAsync(
                () -> dbos.startWorkflow(() -> flows.three(seq)), starters));
      }
      for (var f : fs) {
        f.join().getResult();
      }
      return (System.nanoTime() - t0) / 1e9;
    } finally {
      starters.shutdownNow();
    }
  }

  /**
   * The protocol's burn-down: {@code n} runs enqueued on a DBOS queue (DBOS's way to start a
   * workflow that no executor runs yet) from 8 threads while no instance serves that queue, then
   * served by a second DBOS instance in this JVM, which registers the queue and launches; seconds
   * from its launch until all {@code n} are done. The queue has no concurrency limits, so one poll
   * takes every run, and polls every {@value #DRAIN_POLL_MS} ms instead of DBOS's default second.
   */
  @Override
  public double drain(int n) throws Exception {
    String queue = "burn" + seqs.get();
    Recorder r = new Recorder();
    rec = r;
    try (DBOSClient client = new DBOSClient(pool)) {
      DBOSClient.EnqueueOptions options =
          new DBOSClient.EnqueueOptions("three", queue).withClassName(FlowsImpl.class.getName());
      EightStarters.start(n, seqs, seq -> client.enqueueWorkflow(options, new Object[] {seq}));
    }
    if (r.complete() != 0 || done(queue) != 0) {
      throw new IllegalStateException("DBOS ran enqueued runs before their queue was served");
    }
    DBOS server = new DBOS(config.withExecutorId("drain-" + queue));
    try {
      server.registerProxy(Flows.class, new FlowsImpl(server, this));
      server.registerQueue(new Queue(queue).withPollingInterval(Duration.ofMillis(DRAIN_POLL_MS)));
      long t0 = System.nanoTime();
      server.launch();
      long deadline = t0 + TimeUnit.MINUTES.toNanos(10);
      while (r.complete() < n || done(queue) < n) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("DBOS: queued runs did not finish within 10 minutes");
        }
        Thread.sleep(2);
      }
      return (System.nanoTime() - t0) / 1e9;
    } finally {
      server.shutdown();
    }
  }

  /** Runs of {@code queue} that DBOS has recorded as done. */
  private long done(String queue) throws Exception {
    try (Connection c = pool.getConnection();
        PreparedStatement st =
            c.prepareStatement(
                "SELECT count(*) FROM dbos.workflow_status"
                    + " WHERE status = 'SUCCESS' AND queue_name = ?")) {
      st.setString(1, queue);
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Override
  public Recorder steady(double rate, double seconds) throws Exception {
    Recorder r = new Recorder();
    rec = r;
    int n = (int) Math.round(rate * seconds);
    ScheduledExecutorService sched = Executors.newScheduledThreadPool(16);
    List<CompletableFuture<WorkflowHandle<Integer, RuntimeException>>> fs = new ArrayList<>();
    try {
      long t0 = System.nanoTime() + 50_000_000L;
      for (int i = 0; i < n; i++) {
        int seq = seqs.incrementAndGet();
        long intended = t0 + (long) (i * 1e9 / rate);
        r.intended(seq, intended);
        CompletableFuture<WorkflowHandle<Integer, RuntimeException>> f = new CompletableFuture<>();
        fs.add(f);
        sched.schedule(
            () -> f.complete(dbos.startWorkflow(() -> flows.three(seq))),
            intended - System.nanoTime(),
            TimeUnit.NANOSECONDS);
      }
      for (var f : fs) {
        f.get(5, TimeUnit.MINUTES).getResult();
      }
      return r;
    } finally {
      sched.shutdownNow();
    }
  }

  @Override
  public List<Double> sleepOvershoot(int n) throws Exception {
    overshoot.clear();
    List<WorkflowHandle<Integer, RuntimeException>> hs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int seq = seqs.incrementAndGet();
      hs.add(dbos.startWorkflow(() -> flows.sleeper(seq)));
    }
    for (var h : hs) {
      h.getResult();
    }
    return new ArrayList<>(overshoot);
  }

  @Override
  public List<Double> idleStart(int samples, long idleMs) throws Exception {
    Recorder r = new Recorder();
    rec = r;
    for (int i = 0; i < samples; i++) {
      Thread.sleep(idleMs);
      int seq = seqs.incrementAndGet();
      r.intended(seq, System.nanoTime());
      dbos.startWorkflow(() -> flows.three(seq)).getResult();
    }
    return r.startToFirstStep();
  }

  @Override
  public void close() {
    dbos.shutdown();
    pool.close();
  }
}
