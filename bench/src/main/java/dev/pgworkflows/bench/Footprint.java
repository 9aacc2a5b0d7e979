package dev.pgworkflows.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's footprint under PERFORMANCE.md's memory target: the server as a process of its own
 * (this jar's {@code Main}, on the JVM's defaults unless {@code -Dfootprint.jvm="..."} gives
 * flags), {@code --polls} idle queue long polls held open against it, then burn-downs of {@code
 * --runs} three-step runs through it by two SDK workers in this JVM. It reports the server's
 * resident memory (sampled every 100 ms and the kernel's high-water mark), its threads and its
 * PostgreSQL connections at each stage, and the heap this JVM (the workers) keeps after a full GC
 * following each burn-down: a worker holds nothing per finished run, so that must not grow.
 *
 * <p>With {@code --streams N} it first holds N idle task streams open against the server (each
 * begun by a slot report, as a worker begins one) and reports the server's memory and threads with
 * them open.
 *
 * <p>{@code java -cp bench/target/bench.jar dev.pgworkflows.bench.Footprint [--polls 1000] [--runs
 * 10000] [--rounds 3] [--streams 0] [--out footprint.json]}
 */
public final class Footprint {
  private Footprint() {}

  /** What /proc says of a process: resident and peak resident memory in MiB, threads. */
  record Proc(double rssMib, double hwmMib, int threads) {
    static Proc of(long pid) throws IOException {
      double rss = 0;
      double hwm = 0;
      int threads = 0;
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        String[] f = line.split("\\s+");
        switch (f[0]) {
          case "VmRSS:" -> rss = Long.parseLong(f[1]) / 1024.0;
          case "VmHWM:" -> hwm = Long.parseLong(f[1]) / 1024.0;
          case "Threads:" -> threads = Integer.parseInt(f[1]);
          default -> {}
        }
      }
      return new Proc(rss, hwm, threads);
    }
  }

  public static void main(String[] args) throws Exception {
    Ours.keepConnections();
    List<String> a = List.of(args);
    int polls = intArg(a, "--polls", 1000);
    int runs = intArg(a, "--runs", 10_000);
    int rounds = intArg(a, "--rounds", 3);
    int streams = intArg(a, "--streams", 0);
    int outAt = a.indexOf("--out");
    Path out = Path.of(outAt >= 0 ? a.get(outAt + 1) : "footprint.json");
    String jvmFlags = System.getProperty("footprint.jvm", "").trim();
    Path serverLog =
        out.resolveSibling(
            out.getFileName().toString().replaceFirst("\\.json$", "") + "-server.log");

    Map<String, Object> r = new LinkedHashMap<>();
    r.put("at", Instant.now().toString());
    r.put("polls", polls);
    r.put("runs per burn-down", runs);
    r.put("server JVM flags", jvmFlags.isEmpty() ? "(defaults)" : jvmFlags);
    r.put("java", System.getProperty("java.version"));
    try (Pg pg = new Pg()) {
      String db = pg.freshDatabase("footprint");
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      Process server = startServer(pg, db, port, jvmFlags, serverLog);
      try {
        String url = "http://localhost:" + port;
        ChildProcess.awaitReady(url, server);
        long pid = server.pid();
        Thread.sleep(2000);
        stage(r, "started, idle", pid, pg, db);
        if (streams > 0) {
          IdleStreams.open(url, streams);
          Thread.sleep(2000);
          stage(r, streams + " idle task streams", pid, pg, db);
          r.put("server RSS high-water mark MiB with the streams (VmHWM)", Proc.of(pid).hwmMib());
          Thread.sleep(31_000); // the streams end by themselves (30 s at most)
        }

        try (Ours ours = Ours.at(pg, db, url);
            IdlePolls idle = new IdlePolls(url, polls)) {
          idle.open();
          long waiting = idle.awaitWaiting(polls, Duration.ofSeconds(60));
          r.put("waiting polls seen by the server", waiting);
          Thread.sleep(2000);
          stage(r, polls + " idle polls", pid, pg, db);

          Sampler sampler = new Sampler(pid);
          sampler.start();
          List<Double> stepsPerSecond = new ArrayList<>();
          List<Double> heapAfter = new ArrayList<>();
          for (int i = 0; i < rounds; i++) {
            double secs = ours.burnDown(runs);
            stepsPerSecond.add(3.0 * runs / secs);
            heapAfter.add(heapAfterGc());
            System.err.printf(
                "burn-down %d: %.0f steps/s, server RSS max %.0f MiB so far%n",
                i + 1, 3.0 * runs / secs, sampler.maxRss());
          }
          sampler.stop();
          r.put("burn-down steps/s (polls waiting)", stepsPerSecond);
          r.put("server RSS max MiB, sampled in the burn-downs", sampler.maxRss());
          r.put("server threads max, sampled in the burn-downs", sampler.maxThreads());
          r.put("workers' JVM heap after GC after each burn-down MiB", heapAfter);
          stage(r, "after the burn-downs, polls still waiting", pid, pg, db);
          r.put("idle polls answered", idle.answered());
          r.put("idle polls that failed", idle.failed());
          r.put("idle poll failures", idle.failures());
          r.put("idle polls that got a message", idle.withMessage());
        }
        Proc end = Proc.of(pid);
        r.put("server RSS high-water mark MiB (VmHWM)", end.hwmMib());
      } finally {
        server.destroy();
        server.waitFor();
      }
    }
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(r);
    Files.writeString(out, json);
    System.out.println(json);
    System.out.println("raw results: " + out.toAbsolutePath());
  }

  private static int intArg(List<String> a, String name, int dflt) {
    int at = a.indexOf(name);
    return at >= 0 ? Integer.parseInt(a.get(at + 1)) : dflt;
  }

  /** The server from this very jar, as a child process with its log in {@code log}. */
  private static Process startServer(Pg pg, String db, int port, String jvmFlags, Path log)
      throws IOException {
    Map<String, String> env = new LinkedHashMap<>(Ours.serverEnvironment(pg, db, 20));
    env.put("WORKFLOWS_PORT", Integer.toString(port));
    return ChildProcess.java(
        "dev.pgworkflows.server.Main",
        jvmFlags.isEmpty() ? List.of() : List.of(jvmFlags.split("\\s+")),
        List.of(),
        env,
        log);
  }

  private static void stage(Map<String, Object> r, String name, long pid, Pg pg, String db)
      throws Exception {
    Proc p = Proc.of(pid);
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("server RSS MiB", Math.round(p.rssMib() * 10) / 10.0);
    s.put("server threads", p.threads());
    s.put(
        "PostgreSQL connections to the server's database",
        pg.scalar(
            db, "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()"));
    r.put(name, s);
    System.err.println(name + ": " + s);
  }

  private static double heapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(200);
    }
    return Math.round(
            ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1048576.0 * 10)
        / 10.0;
  }

  /** Task streams held open and idle, as workers of a workflow nobody starts hold them. */
  private static final class IdleStreams {
    private IdleStreams() {}

    static void open(String url, int n) throws Exception {
      ExecutorService readers =
          Executors.newFixedThreadPool(
              4,
              r -> {
                Thread t = new Thread(r, "idle-stream-reader");
                t.setDaemon(true);
                return t;
              });
      HttpClient http =
          HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(readers).build();
      List<CompletableFuture<String>> ids = new ArrayList<>();
      String body = "{\"versions\":[1],\"slots\":8,\"seconds\":30}";
      for (int i = 0; i < n; i++) {
        CompletableFuture<String> id = new CompletableFuture<>();
        ids.add(id);
        http.sendAsync(
                HttpRequest.newBuilder(
                        URI.create(url + "/v1/workflows/footprint-idle/tasks/stream"))
                    .header("Authorization", "Bearer local")
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(),
                HttpResponse.BodyHandlers.fromLineSubscriber(
                    new Flow.Subscriber<String>() {
                      @Override
                      public void onSubscribe(Flow.Subscription s) {
                        s.request(Long.MAX_VALUE);
                      }

                      @Override
                      public void onNext(String line) {
                        if (!id.isDone() && !line.isEmpty()) {
                          id.complete(line.replaceAll(".*\"stream\"\\s*:\\s*\"([^\"]+)\".*", "$1"));
                        }
                      }

                      @Override
                      public void onError(Throwable e) {
                        id.completeExceptionally(e);
                      }

                      @Override
                      public void onComplete() {}
                    }))
            .whenComplete(
                (res, e) -> {
                  if (e != null) {
                    id.completeExceptionally(e); // no answer at all: the connection failed
                  }
                });
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      for (CompletableFuture<String> id : ids) {
        String stream;
        try {
          stream = id.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          long arrived =
              ids.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count();
          throw new IllegalStateException(
              arrived + " of " + n + " task streams sent their id within 120 s", e);
        }
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        url + "/v1/workflows/footprint-idle/tasks/stream/" + stream + "/slots"))
                .header("Authorization", "Bearer local")
                .header("Task-Stream-Slots", stream + " 1 0 8")
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.discarding());
      }
    }
  }

  /** Samples a process's RSS and threads every 100 ms and keeps the largest. */
  private static final class Sampler {
    private final long pid;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private volatile double maxRss;
    private volatile int maxThreads;
    private Thread thread;

    Sampler(long pid) {
      this.pid = pid;
    }

    void start() {
      thread =
          new Thread(
              () -> {
                while (running.get()) {
                  try {
                    Proc p = Proc.of(pid);
                    maxRss = Math.max(maxRss, p.rssMib());
                    maxThreads = Math.max(maxThreads, p.threads());
                    Thread.sleep(100);
                  } catch (IOException | InterruptedException e) {
                    return;
                  }
                }
              },
              "rss-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join();
    }

    double maxRss() {
      return Math.round(maxRss * 10) / 10.0;
    }

    int maxThreads() {
      return maxThreads;
    }
  }

  /**
   * {@code n} queue receives waiting 30 s each on an empty queue, each sent again when it returns,
   * over connections of their own (HTTP/1.1 has one request in flight per connection).
   */
  private static final class IdlePolls implements AutoCloseable {
    private final String url;
    private final int n;
    private final ExecutorService executor = Executors.newFixedThreadPool(2);
    private final HttpClient http;
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong withMessage = new AtomicLong();
    private final Map<String, Long> failures = new ConcurrentHashMap<>();

    IdlePolls(String url, int n) {
      this.url = url;
      this.n = n;
      this.http =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .executor(executor)
              .connectTimeout(Duration.ofSeconds(10))
              .build();
    }

    void open() throws Exception {
      HttpResponse<String> created =
          http.send(
              HttpRequest.newBuilder(URI.create(url + "/v1/queues/idle"))
                  .header("Authorization", "Bearer bench")
                  .PUT(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (created.statusCode() >= 300) {
        throw new IllegalStateException("PUT /v1/queues/idle: " + created.statusCode());
      }
      for (int i = 0; i < n; i++) {
        poll();
      }
    }

    private void poll() {
      if (!open.get()) {
        return;
      }
      HttpRequest req =
          HttpRequest.newBuilder(URI.create(url + "/v1/queues/idle/messages/receive"))
              .header("Content-Type", "application/json")
              .header("Authorization", "Bearer bench")
              .timeout(Duration.ofSeconds(60))
              .POST(HttpRequest.BodyPublishers.ofString("{\"waitSeconds\":30,\"max\":1}"))
              .build();
      long sent = System.nanoTime();
      http.sendAsync(req, HttpResponse.BodyHandlers.ofString())
          .whenComplete(
              (res, err) -> {
                if (err != null || res.statusCode() != 200) {
                  if (open.get()) {
                    failed.incrementAndGet();
                    String why =
                        err != null
                            ? err.getClass().getSimpleName() + ": " + err.getMessage()
                            : "HTTP " + res.statusCode() + " " + res.body();
                    why = why.length() > 200 ? why.substring(0, 200) : why;
                    // How long the request had been out tells a connection closed under a
                    // waiting poll (about the wait) from one found closed when it was sent.
                    long ms = (System.nanoTime() - sent) / 1_000_000;
                    String after =
                        ms < 1_000
                            ? "under 1 s"
                            : ms < 29_000 ? "1-29 s" : ms < 31_000 ? "29-31 s" : "over 31 s";
                    failures.merge(why + " (after " + after + ")", 1L, Long::sum);
                  }
                } else {
                  answered.incrementAndGet();
                  if (res.body().contains("\"id\"")) {
                    withMessage.incrementAndGet();
                  }
                }
                poll();
              });
    }

    /** Waits until the server's gauge shows at least {@code want} waiting polls; returns it. */
    long awaitWaiting(int want, Duration max) throws Exception {
      long deadline = System.nanoTime() + max.toNanos();
      long seen = 0;
      while (System.nanoTime() < deadline) {
        String metrics =
            http.send(
                    HttpRequest.newBuilder(URI.create(url + "/metrics"))
                        .header("Authorization", "Bearer bench")
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .body();
        for (String line : metrics.split("\n")) {
          if (line.startsWith("queue_waiting_polls")) {
            seen = (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
          }
        }
        if (seen >= want) {
          return seen;
        }
        Thread.sleep(200);
      }
      throw new IllegalStateException("only " + seen + " polls were waiting after " + max);
    }

    long answered() {
      return answered.get();
    }

    long failed() {
      return failed.get();
    }

    /** Each kind of failure seen, with its count. */
    Map<String, Long> failures() {
      return new TreeMap<>(failures);
    }

    long withMessage() {
      return withMessage.get();
    }

    @Override
    public void close() {
      open.set(false);
      executor.shutdownNow();
    }
  }
}
