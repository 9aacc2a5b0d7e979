package dev.pgworkflows.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pgworkflows.server.QueueServer;
import dev.pgworkflows.server.ServerConfig;
import dev.pgworkflows.sql.Migrator;
import dev.pgworkflows.workflows.Concurrency;
import dev.pgworkflows.workflows.StartOptions;
import dev.pgworkflows.workflows.Worker;
import dev.pgworkflows.workflows.WorkerOptions;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.WorkflowClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/** pgworkflows: the server in this JVM over its own database, SDK workers over HTTP. */
final class Ours implements Contender {
  private static final int WORKERS = 2;

  /**
   * Runs each worker holds at once. A backlog's burn-down is bound by the runs in flight: every
   * step of a run waits for its completion's batch, and more runs in flight make the batches larger
   * and each step cheaper. DBOS's queue takes every run it finds into its workflow pool (50 threads
   * on JDK 17, a virtual thread a workflow on 21 and later), and its rate moved neither with a
   * worker concurrency of 64 nor on JDK 25.
   */
  private static final int CONCURRENCY = Integer.getInteger("bench.concurrency", 96);

  private final Pg pg;
  private final String db;
  private final QueueServer server;

  /** The server's address; null over JDBC. */
  private final String url;

  /** The pool the engine in this JVM works over; null over HTTP. */
  private final HikariDataSource dataSource;

  private final WorkflowClient client;
  private volatile Recorder rec = new Recorder();
  private volatile Map<String, Double> threadsAtEnd = Map.of();
  private final ConcurrentLinkedQueue<Double> overshoot = new ConcurrentLinkedQueue<>();
  private final ConcurrentHashMap<Integer, Long> sleptAt = new ConcurrentHashMap<>();
  private final Workflow<Integer, Integer> three;
  private final Workflow<Integer, Integer> sleeper;

  Ours(Pg pg, int poolSize) throws Exception {
    this(pg, pg.freshDatabase("ours"), poolSize);
  }

  private Ours(Pg pg, String db, int poolSize) throws Exception {
    this(pg, db, startServer(pg, db, poolSize), null);
  }

  /**
   * Raises the keep-alive connections the JDK keeps per server (default 5), unless given: workers,
   * their completion senders and the starter threads share one server, and a closed surplus
   * connection costs a new TCP connection on the next call. Call first in main, before any HTTP.
   */
  static void keepConnections() {
    if (System.getProperty("http.maxConnections") == null) {
      System.setProperty("http.maxConnections", "64");
    }
  }

  /** Against a server running elsewhere (another process) on {@code db}. */
  static Ours at(Pg pg, String db, String url) throws Exception {
    return new Ours(pg, db, null, url);
  }

  /**
   * With no server: the engine in this JVM over a pool of {@code poolSize} connections, its workers
   * and client over JDBC.
   */
  static Ours overJdbc(Pg pg, int poolSize) throws Exception {
    String db = pg.freshDatabase("ours_jdbc");
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(pg.jdbcUrl(db));
    c.setUsername("postgres");
    c.setPassword("postgres");
    c.setMaximumPoolSize(poolSize);
    c.setPoolName("bench-jdbc");
    HikariDataSource ds = new HikariDataSource(c);
    try {
      new Migrator(ds).migrate();
      return new Ours(pg, db, ds);
    } catch (Exception e) {
      ds.close();
      throw e;
    }
  }

  private Ours(Pg pg, String db, HikariDataSource dataSource) {
    this.pg = pg;
    this.db = db;
    this.server = null;
    this.url = null;
    this.dataSource = dataSource;
    this.client = WorkflowClient.connect(dataSource);
    this.three = three();
    this.sleeper = sleeper();
  }

  /** Whether this contender works through a server (else over JDBC). */
  boolean overHttp() {
    return url != null;
  }

  private static QueueServer startServer(Pg pg, String db, int poolSize) {
    return QueueServer.start(ServerConfig.from(serverEnvironment(pg, db, poolSize)));
  }

  /** Prefix of the JVM properties that add to or override the server's configuration. */
  static final String SERVER_PROPERTY = "bench.server.";

  /**
   * The benchmark's server configuration: on {@code db}, any free port, {@code poolSize}; a JVM
   * property {@code -Dbench.server.NAME=value} sets the server's variable {@code NAME} (for
   * measuring one setting at a time, such as {@code WORKFLOWS_DB_SOCKET_TIMEOUT_MS}).
   */
  static Map<String, String> serverEnvironment(Pg pg, String db, int poolSize) {
    Map<String, String> env = new java.util.HashMap<>();
    env.put("WORKFLOWS_PORT", "0");
    env.put("WORKFLOWS_DB_POOL_SIZE", Integer.toString(poolSize));
    env.put("DATABASE_URL", pg.jdbcUrl(db));
    env.put("WORKFLOWS_DATABASE_USER", "postgres");
    env.put("WORKFLOWS_DATABASE_PASSWORD", "postgres");
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith(SERVER_PROPERTY)) {
        env.put(name.substring(SERVER_PROPERTY.length()), System.getProperty(name));
      }
    }
    return Map.copyOf(env);
  }

  private Ours(Pg pg, String db, QueueServer server, String externalUrl) throws Exception {
    this.pg = pg;
    this.db = db;
    this.server = server;
    this.url = server != null ? "http://localhost:" + server.port() : externalUrl;
    this.dataSource = null;
    this.client = WorkflowClient.connect(url);
    this.three = three();
    this.sleeper = sleeper();
  }

  private Workflow<Integer, Integer> three() {
    return Workflow.define("bench3", Integer.class, Integer.class)
        .run(
            (ctx, seq) -> {
              ctx.step().run("a", Integer.class, () -> mark(seq, 1, 2));
              ctx.step().run("b", Integer.class, () -> mark(seq, 3, 4));
              ctx.step().run("c", Integer.class, () -> mark(seq, 5, 5));
              return seq;
            });
  }

  private Workflow<Integer, Integer> sleeper() {
    return Workflow.define("sleeper", Integer.class, Integer.class)
        .run(
            (ctx, seq) -> {
              ctx.step().run("before", Integer.class, () -> 0);
              // When sleep is first called (the body replays after the sleep; putIfAbsent
              // keeps the first call's time).
              sleptAt.putIfAbsent(seq, System.nanoTime());
              ctx.step().sleep("nap", Duration.ofSeconds(1));
              ctx.step()
                  .run(
                      "after",
                      Integer.class,
                      () -> {
                        overshoot.add(
                            (System.nanoTime() - sleptAt.get(seq) - 1_000_000_000L) / 1e6);
                        return 0;
                      });
              return seq;
            });
  }

  private int mark(int seq, int start, int end) {
    Recorder r = rec;
    r.mark(seq, start);
    r.mark(seq, end);
    if (end == 5) {
      lastStep.accept(seq);
    }
    return start;
  }

  /** Told of every run whose last step runs (a step may run more than once). */
  private volatile IntConsumer lastStep = seq -> {};

  /** What one interval of {@link #closedLoop} saw. */
  record Interval(double seconds, long runs) {}

  /**
   * Closed loop: 8 threads start runs whenever fewer than {@code inFlight} are unfinished, for
   * {@code total}; {@code each} hears, every {@code interval}, how many runs reached their last
   * step in it. Returns when the time is up and every started run has completed.
   */
  void closedLoop(Duration total, int inFlight, Duration interval, Consumer<Interval> each)
      throws Exception {
    // Nothing is kept per run: over half an hour, a timestamp per run would grow this JVM's heap
    // by millions of entries, and the collector's work with it.
    rec = Recorder.nothingKept();
    long floor = newestRun();
    Semaphore room = new Semaphore(inFlight);
    Set<Integer> open = ConcurrentHashMap.newKeySet();
    AtomicLong done = new AtomicLong();
    lastStep =
        seq -> {
          if (open.remove(seq)) {
            done.incrementAndGet();
            room.release();
          }
        };
    List<Worker> workers = serve(three, WORKERS);
    AtomicLong started = new AtomicLong();
    long end = System.nanoTime() + total.toNanos();
    List<Thread> starters = new ArrayList<>();
    try {
      for (int t = 0; t < 8; t++) {
        Thread th =
            new Thread(
                () -> {
                  try {
                    while (System.nanoTime() < end) {
                      if (room.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        int seq = seqs.incrementAndGet();
                        open.add(seq);
                        client.start("bench3", seq);
                        started.incrementAndGet();
                      }
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                },
                "starter-" + t);
        starters.add(th);
        th.start();
      }
      long last = System.nanoTime();
      long lastDone = 0;
      while (last < end) {
        Thread.sleep(Math.max(1, Math.min(interval.toMillis(), (end - last) / 1_000_000)));
        long now = System.nanoTime();
        long d = done.get();
        each.accept(new Interval((now - last) / 1e9, d - lastDone));
        last = now;
        lastDone = d;
      }
      for (Thread th : starters) {
        th.join();
      }
      awaitCompleted("bench3", floor, (int) started.get(), null, Duration.ofMinutes(5));
    } finally {
      lastStep = seq -> {};
      close(workers);
    }
  }

  /** The database this contender runs on. */
  String database() {
    return db;
  }

  @Override
  public String name() {
    return overHttp() ? "pgworkflows" : "pgworkflows-jdbc";
  }

  private List<Worker> serve(Workflow<?, ?> wf, int workers) {
    return serve(wf, workers, CONCURRENCY);
  }

  private List<Worker> serve(Workflow<?, ?> wf, int workers, int concurrency) {
    List<Worker> out = new ArrayList<>();
    for (int i = 0; i < workers; i++) {
      WorkerOptions options =
          overHttp()
              ? WorkerOptions.url(url).pollWait(Duration.ofSeconds(5))
              : WorkerOptions.dataSource(dataSource);
      out.add(wf.serve(options.concurrency(concurrency)));
    }
    return out;
  }

  /** The newest run id so far: runs started from now on have larger ones. */
  private long newestRun() throws Exception {
    return pg.scalar(db, "SELECT coalesce(max(run_id), 0) FROM queue.workflow_run");
  }

  private long completedSince(String workflow, long floor) throws Exception {
    return pg.scalar(
        db,
        "SELECT count(*) FROM queue.workflow_run WHERE workflow_name = '"
            + workflow
            + "' AND status = 'completed' AND run_id > "
            + floor);
  }

  /**
   * Closes the workers side by side: each waits for its poll in flight to return (up to the 5 s
   * poll wait) so that no task leased to it is stranded, and one after the other that adds up.
   */
  private static void close(List<Worker> workers) {
    workers.parallelStream().forEach(Worker::close);
  }

  /**
   * Waits until {@code n} runs of {@code workflow} newer than {@code floor} are completed. DBOS's
   * side waits on its handles in this JVM; here the recorder (when given) says in memory when the
   * last step of every run has started, and only then does the database, whose count reads just the
   * runs of this round, confirm that their completions committed. (Counting all completed runs
   * every 50 ms grew with every round and cost PostgreSQL tens of milliseconds a query.)
   */
  private void awaitCompleted(String workflow, long floor, int n, Recorder r, Duration max)
      throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    while (r != null && r.complete() < n) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(workflow + ": runs did not finish within " + max);
      }
      Thread.sleep(2);
    }
    while (completedSince(workflow, floor) < n) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(workflow + ": runs did not finish within " + max);
      }
      Thread.sleep(5);
    }
  }

  private final AtomicInteger seqs = new AtomicInteger();

  @Override
  public double burnDown(int n) throws Exception {
    Recorder r = new Recorder();
    rec = r;
    long floor = newestRun();
    List<Worker> workers = serve(three, WORKERS);
    try {
      long t0 = System.nanoTime();
      startFromEightThreads(n);
      awaitCompleted("bench3", floor, n, r, Duration.ofMinutes(10));
      return (System.nanoTime() - t0) / 1e9;
    } finally {
      close(workers);
    }
  }

  /** Starts {@code n} runs of bench3 from 8 threads and returns when all are started. */
  private void startFromEightThreads(int n) {
    EightStarters.start(n, seqs, seq -> client.start("bench3", seq));
  }

  /**
   * Burn-down of runs started before any worker serves them (the protocol's burn-down): seconds
   * from the workers' start until all {@code n} are completed.
   */
  @Override
  public double drain(int n) throws Exception {
    return drainStarted(startOnly(n));
  }

  /** Runs started and not yet served: what {@link #drainStarted} waits for. */
  record Started(long floor, int n, Recorder recorder) {}

  /** Starts {@code n} runs from 8 threads with no worker serving them. */
  Started startOnly(int n) throws Exception {
    Recorder r = new Recorder();
    rec = r;
    long floor = newestRun();
    startFromEightThreads(n);
    return new Started(floor, n, r);
  }

  /**
   * Starts {@code n} runs from 8 threads with no worker serving them, each with one of {@code keys}
   * concurrency keys in turn (none when {@code keys} is 0).
   */
  Started startOnly(int n, int keys) throws Exception {
    if (keys == 0) {
      return startOnly(n);
    }
    Recorder r = new Recorder();
    rec = r;
    long floor = newestRun();
    EightStarters.start(
        n,
        seqs,
        seq ->
            client.start(
                "bench3",
                seq,
                StartOptions.builder().concurrencyKey("key-" + (seq % keys)).build()));
    return new Started(floor, n, r);
  }

  /** Sets bench3's concurrency limit per key (null: none). */
  void concurrencyLimit(Integer limit) {
    client.workflows().setConcurrencyLimit("bench3", limit);
  }

  /** Sets bench3's concurrency limit with its strategy and total. */
  void concurrency(Concurrency c) {
    client.workflows().setConcurrency("bench3", c);
  }

  /** The runs the workers hold at once, all of them together. */
  static int slots() {
    return WORKERS * CONCURRENCY;
  }

  /** Seconds from the workers' start until the runs {@code s} holds are completed. */
  double drainStarted(Started s) throws Exception {
    long t0 = System.nanoTime();
    List<Worker> workers = serve(three, WORKERS);
    try {
      awaitCompleted("bench3", s.floor(), s.n(), s.recorder(), Duration.ofMinutes(10));
      return (System.nanoTime() - t0) / 1e9;
    } finally {
      close(workers);
    }
  }

  /**
   * The threads' CPU times when the last steady load's runs were done, before its workers closed
   * ({@code -Dprobe.threads=true}; empty otherwise).
   */
  Map<String, Double> threadsAtEnd() {
    return threadsAtEnd;
  }

  @Override
  public Recorder steady(double rate, double seconds) throws Exception {
    Recorder r = new Recorder();
    rec = r;
    long floor = newestRun();
    List<Worker> workers = serve(three, WORKERS);
    int n = (int) Math.round(rate * seconds);
    ScheduledExecutorService sched = Executors.newScheduledThreadPool(16);
    try {
      Thread.sleep(500);
      long t0 = System.nanoTime() + 50_000_000L;
      for (int i = 0; i < n; i++) {
        int seq = seqs.incrementAndGet();
        long intended = t0 + (long) (i * 1e9 / rate);
        r.intended(seq, intended);
        sched.schedule(
            () -> client.start("bench3", seq), intended - System.nanoTime(), TimeUnit.NANOSECONDS);
      }
      awaitCompleted("bench3", floor, n, r, Duration.ofMinutes(5));
      if (Boolean.getBoolean("probe.threads")) {
        threadsAtEnd = ThreadCpu.now();
      }
      return r;
    } finally {
      sched.shutdownNow();
      close(workers);
    }
  }

  /** When each iteration of the running long run first ran its step, by iteration. */
  private volatile long[] iterationAt;

  /**
   * One run of {@code iterations} × (a no-op step, a 1 ms sleep) on one worker; the wall ms of each
   * iteration but the last (from one iteration's step to the next one's).
   */
  double[] longRun(int iterations) throws Exception {
    long[] at = new long[iterations];
    iterationAt = at;
    Workflow<Integer, Integer> loop =
        Workflow.define("long", Integer.class, Integer.class)
            .run(
                (ctx, n) -> {
                  for (int i = 0; i < n; i++) {
                    int k = i;
                    ctx.step()
                        .run(
                            "s" + i,
                            Integer.class,
                            () -> {
                              iterationAt[k] = System.nanoTime();
                              return k;
                            });
                    ctx.step().sleep("z" + i, Duration.ofMillis(1));
                  }
                  return n;
                });
    long floor = newestRun();
    List<Worker> workers = serve(loop, 1);
    try {
      client.start("long", iterations);
      awaitCompleted("long", floor, 1, null, Duration.ofMinutes(10));
    } finally {
      close(workers);
    }
    double[] ms = new double[iterations - 1];
    for (int i = 0; i < ms.length; i++) {
      ms[i] = (at[i + 1] - at[i]) / 1e6;
    }
    return ms;
  }

  @Override
  public List<Double> sleepOvershoot(int n) throws Exception {
    overshoot.clear();
    long floor = newestRun();
    // As many slots as sleepers: all of them wake at once, and DBOS gives each its own thread;
    // with fewer slots the overshoot would measure queueing for a slot instead of the wake-up.
    List<Worker> workers = serve(sleeper, 1, n);
    try {
      for (int i = 0; i < n; i++) {
        client.start("sleeper", seqs.incrementAndGet());
      }
      awaitCompleted("sleeper", floor, n, null, Duration.ofMinutes(2));
      return new ArrayList<>(overshoot);
    } finally {
      close(workers);
    }
  }

  @Override
  public List<Double> idleStart(int samples, long idleMs) throws Exception {
    Recorder r = new Recorder();
    rec = r;
    List<Worker> workers = serve(three, 1);
    try {
      Thread.sleep(500);
      for (int i = 0; i < samples; i++) {
        Thread.sleep(idleMs);
        int seq = seqs.incrementAndGet();
        r.intended(seq, System.nanoTime());
        client.start("bench3", seq);
        while (r.complete() < i + 1) {
          Thread.sleep(1);
        }
      }
      return r.startToFirstStep();
    } finally {
      close(workers);
    }
  }

  /**
   * The load generator's HTTP: blocking {@code HttpURLConnection} with keep-alive, the cheapest
   * client in the JDK per call (this JVM shares two cores with the server and PostgreSQL). The body
   * is buffered so that headers and body leave in one write.
   */
  private String call(String method, String path, String body) throws Exception {
    HttpURLConnection c = (HttpURLConnection) URI.create(url + path).toURL().openConnection();
    c.setRequestMethod(method);
    c.setRequestProperty("Authorization", "Bearer bench");
    if (body != null) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      c.setDoOutput(true);
      c.setRequestProperty("Content-Type", "application/json");
      try (OutputStream out = c.getOutputStream()) {
        out.write(bytes);
      }
    }
    int status = c.getResponseCode();
    try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
      String answer = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
      if (status >= 300) {
        throw new IllegalStateException(method + " " + path + ": HTTP " + status + " " + answer);
      }
      return answer;
    }
  }

  private String post(String path, String body) throws Exception {
    return call("POST", path, body);
  }

  private void delete(String path) throws Exception {
    call("DELETE", path, null);
  }

  /** Idle long-poll wake-up: ms from the start of a send to the waiting receive returning. */
  List<Double> queueWakeup(int samples, long idleMs) throws Exception {
    call("PUT", "/v1/queues/wake", null);
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < samples; i++) {
      AtomicLong returned = new AtomicLong();
      Thread consumer =
          new Thread(
              () -> {
                try {
                  post("/v1/queues/wake/messages/receive", "{\"waitSeconds\":10,\"max\":1}");
                  returned.set(System.nanoTime());
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      consumer.start();
      Thread.sleep(idleMs);
      long t0 = System.nanoTime();
      post("/v1/queues/wake/messages", "{\"body\":1}");
      consumer.join();
      out.add((returned.get() - t0) / 1e6);
      post("/v1/queues/wake/purge", "");
    }
    return out;
  }

  /** send → receive → delete cycles per second over REST with {@code clients} threads. */
  double queueCycles(int clients, double seconds) throws Exception {
    String q = "cycle" + clients;
    call("PUT", "/v1/queues/" + q, null);
    AtomicLong cycles = new AtomicLong();
    long end = System.nanoTime() + (long) (seconds * 1e9);
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      Thread t =
          new Thread(
              () -> {
                try {
                  while (System.nanoTime() < end) {
                    post("/v1/queues/" + q + "/messages", "{\"body\":{\"n\":1}}");
                    String got = post("/v1/queues/" + q + "/messages/receive", "{\"max\":1}");
                    int at = got.indexOf("\"id\":");
                    if (at >= 0) {
                      String id = got.substring(at + 5, got.indexOf(',', at));
                      delete("/v1/queues/" + q + "/messages/" + id);
                      cycles.incrementAndGet();
                    }
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    return cycles.get() / seconds;
  }

  /**
   * The fan-out workload on this contender's server ({@link FanOut}): {@code warmUps} unmeasured
   * runs of one parallel group of {@code branches} no-op steps, then {@code rounds} measured ones.
   */
  FanOut.Result fanOut(int branches, int warmUps, int rounds) throws Exception {
    return new FanOut(url, client).run(branches, warmUps, rounds);
  }

  @Override
  public void close() {
    client.close();
    if (server != null) {
      server.close();
    }
    if (dataSource != null) {
      dataSource.close();
    }
  }
}
