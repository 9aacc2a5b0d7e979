package dev.pgworkflows.engine.internal.host;

import dev.pgworkflows.engine.internal.maintenance.BatchTimer;
import dev.pgworkflows.engine.internal.maintenance.BulkRunner;
import dev.pgworkflows.engine.internal.maintenance.Deadlines;
import dev.pgworkflows.engine.internal.maintenance.HttpDelivery;
import dev.pgworkflows.engine.internal.maintenance.Retention;
import dev.pgworkflows.engine.internal.maintenance.ScheduleTicker;
import dev.pgworkflows.engine.internal.maintenance.WebhookTargets;
import dev.pgworkflows.engine.internal.maintenance.WorkerRegistry;
import dev.pgworkflows.engine.internal.runtime.Backfills;
import dev.pgworkflows.engine.internal.runtime.BulkCalls;
import dev.pgworkflows.engine.internal.runtime.CallbackCalls;
import dev.pgworkflows.engine.internal.runtime.CodeRegistrations;
import dev.pgworkflows.engine.internal.runtime.Completions;
import dev.pgworkflows.engine.internal.runtime.HandedStarts;
import dev.pgworkflows.engine.internal.runtime.LongPoll;
import dev.pgworkflows.engine.internal.runtime.Retries;
import dev.pgworkflows.engine.internal.runtime.RunCalls;
import dev.pgworkflows.engine.internal.runtime.RunEnds;
import dev.pgworkflows.engine.internal.runtime.SearchCalls;
import dev.pgworkflows.engine.internal.runtime.Starts;
import dev.pgworkflows.engine.internal.runtime.StateWaits;
import dev.pgworkflows.engine.internal.runtime.StickyWorkflows;
import dev.pgworkflows.engine.internal.runtime.StreamWrites;
import dev.pgworkflows.engine.internal.runtime.TaskPolls;
import dev.pgworkflows.engine.internal.runtime.Timers;
import dev.pgworkflows.engine.internal.runtime.UpdateCalls;
import dev.pgworkflows.engine.internal.runtime.UpdateWaits;
import dev.pgworkflows.engine.internal.runtime.VersionRegistry;
import dev.pgworkflows.engine.internal.runtime.Waiters;
import dev.pgworkflows.engine.internal.runtime.Wakeups;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.runtime.WorkerSightings;
import dev.pgworkflows.engine.internal.runtime.WorkflowEvents;
import dev.pgworkflows.engine.internal.store.BulkStore;
import dev.pgworkflows.engine.internal.store.CallbackStore;
import dev.pgworkflows.engine.internal.store.ChainStore;
import dev.pgworkflows.engine.internal.store.FlowStore;
import dev.pgworkflows.engine.internal.store.QueueStore;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.engine.internal.store.SearchStore;
import dev.pgworkflows.engine.internal.store.Sql;
import dev.pgworkflows.engine.internal.store.StateStore;
import dev.pgworkflows.engine.internal.store.TaskStore;
import dev.pgworkflows.engine.internal.store.TopicStore;
import dev.pgworkflows.engine.internal.store.UpdateStore;
import dev.pgworkflows.engine.internal.store.WorkerStore;
import dev.pgworkflows.engine.internal.telemetry.RunSpans;
import dev.pgworkflows.sweeper.Sweeper;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine wired once over a database, for whichever process hosts it: the server (which puts
 * HTTP, tokens, task streams and the dashboard around it) or an application serving its workflows
 * over JDBC. It holds the LISTEN connection and the waits it wakes, the worker calls, starts, the
 * record of the workers it has seen, and the background jobs, which run in one process per database
 * at a time ({@link Leadership}).
 */
public final class EngineCore implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EngineCore.class);

  /** How the host tunes the engine; {@link #defaults()} are the server's defaults. */
  public record Settings(
      int maxRetentionDays,
      long workerExpiryMs,
      long fallbackPollMs,
      long sweeperIntervalMs,
      long scheduleIntervalMs,
      long deadlineIntervalMs,
      long statementTimeoutMs,
      HttpDelivery.Settings delivery,
      WebhookTargets webhookTargets,
      int ioThreads) {

    public static Settings defaults() {
      return new Settings(
          365,
          30_000,
          5_000,
          60_000,
          1_000,
          1_000,
          0,
          new HttpDelivery.Settings(8, Duration.ofSeconds(10), Duration.ofSeconds(1)),
          WebhookTargets.allowing(List.of(), java.net.InetAddress::getAllByName),
          4);
    }
  }

  /**
   * What the host adds: its counters, its tracing, its clock, and who hears of notifications and
   * run ends beyond the engine's own waits.
   *
   * @param processId how the workers listing names this process (asked once, at start)
   * @param connections opens the connections the engine keeps for itself (to LISTEN, to lead)
   * @param onNotify hears a notification of a {@code #} channel the engine does not handle itself
   *     (a queue's goes to the waits on it)
   * @param onReconnect runs after the LISTEN connection came back
   * @param runEnded hears of a run that ended here, after the engine's own waits
   */
  public record Hooks(
      WorkflowEvents events,
      Sweeper.Listener swept,
      OpenTelemetry otel,
      InstantSource clock,
      Supplier<String> processId,
      ConnectionSource connections,
      Consumer<String> onNotify,
      Runnable onReconnect,
      LongConsumer runEnded) {}

  /**
   * The engine of an application hosting it over its own {@code dataSource} (no server): the
   * defaults, no counters, run spans to {@code otel}, and the pool's connections for its own. Not
   * started.
   */
  public static EngineCore overDataSource(
      DataSource dataSource, OpenTelemetry otel, Supplier<String> processId) {
    return new EngineCore(
        dataSource,
        Settings.defaults(),
        new Hooks(
            null,
            null,
            otel,
            InstantSource.system(),
            processId,
            dataSource::getConnection,
            null,
            null,
            null));
  }

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final Sql sql;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService io;
  private final QueueStore queues;
  private final Waiters waiters;
  private final Timers timers;
  private final LongPoll longPoll;
  private final HttpDelivery delivery;
  private final Wakeups wakeups;
  private final RunStore runs;
  private final TaskStore tasks;
  private final VersionRegistry versions;
  private final StateStore stateStore;
  private final SearchCalls searchCalls;
  private final StateWaits stateWaits;
  private final RunEnds runEnds;
  private final WorkerSightings sightings;
  private final WorkerStore workerStore;
  private final Starts starts;
  private final Completions completions;
  private final FlowStore flowStore;
  private final ChainStore chainStore;
  private final WorkerCalls calls;
  private final RunCalls runCalls;
  private final CallbackCalls callbackCalls;
  private final UpdateCalls updateCalls;
  private final CodeRegistrations registrations;
  private final Backfills backfills;
  private final StickyWorkflows sticky;
  private final StreamWrites streamWrites;
  private final Leadership leadership;
  private final Retention retention;
  private final ScheduleTicker ticker;
  private final Deadlines deadlines;
  private final BulkRunner bulkRunner;
  private final BulkCalls bulkCalls;
  private final BatchTimer batchTimer;
  private final Supplier<String> processId;
  private final long workerExpiryMs;
  private WorkerRegistry workerRegistry;

  /**
   * Wires the engine; nothing runs until {@link #start()}. {@code dataSource} is the pool every
   * call takes its connection from.
   */
  public EngineCore(DataSource dataSource, Settings settings, Hooks hooks) {
    this.sql = new Sql(dataSource);
    InstantSource clock = hooks.clock();
    WorkflowEvents events = hooks.events() == null ? WorkflowEvents.NONE : hooks.events();
    this.scheduler = Executors.newScheduledThreadPool(2, daemon("scheduler"));
    this.io = Executors.newFixedThreadPool(Math.max(4, settings.ioThreads()), daemon("poll-io"));
    closeables.add(io::shutdownNow);
    closeables.add(scheduler::shutdownNow);

    this.queues = new QueueStore(sql);
    this.waiters = new Waiters();
    this.timers = new Timers(scheduler, waiters::wakeOne, clock);
    this.longPoll = new LongPoll(waiters, timers, io, scheduler, queues::nextVisibleAt, clock);
    this.leadership = new Leadership(hooks.connections(), daemon("background"));
    closeables.add(leadership);
    this.delivery =
        new HttpDelivery(
            sql, settings.delivery(), leadership.scheduler(), clock, settings.webhookTargets());
    closeables.add(delivery);
    Consumer<String> others = hooks.onNotify() == null ? q -> {} : hooks.onNotify();
    Runnable reconnected = hooks.onReconnect() == null ? () -> {} : hooks.onReconnect();
    this.wakeups =
        new Wakeups(
            hooks.connections(),
            queue -> {
              if (queue.equals("#outbox")) {
                delivery.nudge();
              } else if (queue.startsWith("#")) {
                others.accept(queue);
              } else {
                waiters.wakeOne(queue);
              }
            },
            () -> {
              waiters.queuesWaitedOn().forEach(waiters::wakeOne);
              reconnected.run();
            });
    closeables.add(wakeups);

    this.runs = new RunStore(sql, settings.maxRetentionDays());
    this.tasks = new TaskStore(sql);
    this.versions = new VersionRegistry(tasks);
    this.stateStore = new StateStore(sql);
    this.searchCalls = new SearchCalls(new SearchStore(sql));
    // Waits for a run's state: woken at once by this process's completions and run ends, and
    // every half second for changes and ends through other processes.
    this.stateWaits = new StateWaits(stateStore::states, scheduler, io, Duration.ofMillis(500));
    LongConsumer ended = hooks.runEnded() == null ? runId -> {} : hooks.runEnded();
    RunSpans spans = new RunSpans(hooks.otel() == null ? OpenTelemetry.noop() : hooks.otel());
    this.runEnds =
        new RunEnds(
            events,
            spans,
            runId -> {
              ended.accept(runId);
              stateWaits.changed(runId);
            });
    this.sightings = new WorkerSightings(settings.workerExpiryMs());
    this.workerStore = new WorkerStore(sql);
    this.starts = new Starts(runs, new HandedStarts(runs, longPoll), events, timers, clock);
    this.completions =
        new Completions(
            tasks, timers, events, runEnds, spans, versions, clock, stateWaits::changed);
    this.flowStore = new FlowStore(sql);
    this.sticky = new StickyWorkflows(flowStore);
    this.chainStore = new ChainStore(sql, settings.maxRetentionDays());
    this.calls =
        new WorkerCalls(
            new WorkerCalls.Parts(
                new TaskPolls(tasks, longPoll, versions),
                sightings,
                completions,
                new Retries(tasks, timers, events, clock),
                tasks,
                flowStore,
                timers,
                chainStore,
                runs,
                runEnds,
                events,
                stateWaits::changed,
                sticky));

    this.runCalls = new RunCalls(starts, runs, chainStore, runEnds, events);
    this.callbackCalls = new CallbackCalls(new CallbackStore(sql), runCalls);
    UpdateStore updates = new UpdateStore(sql);
    // Callers waiting for answers: woken at once by answers made here, and every quarter second
    // for answers made through other processes.
    this.updateCalls =
        new UpdateCalls(
            updates,
            runCalls,
            new UpdateWaits(updates::results, scheduler, io, Duration.ofMillis(250)),
            events);
    this.registrations = new CodeRegistrations(new ScheduleStore(sql), flowStore, sticky, clock);
    this.backfills = new Backfills(new ScheduleStore(sql), settings.maxRetentionDays(), events);
    this.streamWrites = new StreamWrites(new RunStreamStore(sql));

    Sweeper.Listener swept = hooks.swept() == null ? s -> {} : hooks.swept();
    this.retention =
        new Retention(
            dataSource,
            Duration.ofMillis(settings.sweeperIntervalMs()),
            settings.statementTimeoutMs(),
            swept);
    closeables.add(retention);
    this.ticker =
        new ScheduleTicker(
            dataSource,
            Duration.ofMillis(settings.scheduleIntervalMs()),
            clock,
            settings.maxRetentionDays(),
            events);
    closeables.add(ticker);
    this.deadlines =
        new Deadlines(runs, runEnds, Duration.ofMillis(settings.deadlineIntervalMs()), clock);
    closeables.add(deadlines);
    BulkStore bulk = new BulkStore(sql);
    this.bulkCalls = new BulkCalls(bulk);
    this.bulkRunner = new BulkRunner(bulk, Duration.ofSeconds(1));
    closeables.add(bulkRunner);
    this.batchTimer =
        new BatchTimer(new TopicStore(sql), Duration.ofMillis(settings.scheduleIntervalMs()));
    closeables.add(batchTimer);
    this.processId = hooks.processId();
    this.workerExpiryMs = settings.workerExpiryMs();
    this.fallbackPollMs = settings.fallbackPollMs();
  }

  private final long fallbackPollMs;
  private boolean listening; // guarded by this

  /**
   * Starts listening, and the fallback wake-ups (a lost notification costs at most one interval).
   * Once; {@link #start()} does it when it has not been done.
   */
  public synchronized EngineCore listen() {
    if (!listening) {
      listening = true;
      wakeups.start();
      scheduler.scheduleWithFixedDelay(
          () -> waiters.queuesWaitedOn().forEach(waiters::wakeOne),
          fallbackPollMs,
          fallbackPollMs,
          TimeUnit.MILLISECONDS);
      // Read on the I/O threads: the scheduler's two threads run the timers, which must not wait
      // for a connection.
      scheduler.scheduleWithFixedDelay(() -> io.execute(sticky::refresh), 0, 2, TimeUnit.SECONDS);
    }
    return this;
  }

  /** Listens, records the workers seen here, and bids for the lead of the background jobs. */
  public synchronized EngineCore start() {
    listen();
    leadership.start();
    delivery.start();
    retention.start(leadership.scheduler());
    ticker.start(leadership.scheduler());
    deadlines.start(leadership.scheduler());
    bulkRunner.start(leadership.scheduler());
    batchTimer.start(leadership.scheduler());
    workerRegistry =
        new WorkerRegistry(
            sightings, workerStore, processId.get(), workerExpiryMs, leadership::leading);
    closeables.add(workerRegistry);
    sightings.onNews(workerRegistry::reportNow);
    workerRegistry.start(scheduler);
    return this;
  }

  public Sql sql() {
    return sql;
  }

  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  public ExecutorService io() {
    return io;
  }

  public QueueStore queues() {
    return queues;
  }

  public Waiters waiters() {
    return waiters;
  }

  public Timers timers() {
    return timers;
  }

  public LongPoll longPoll() {
    return longPoll;
  }

  public HttpDelivery delivery() {
    return delivery;
  }

  public boolean listening() {
    return wakeups.connected();
  }

  public RunStore runs() {
    return runs;
  }

  public TaskStore tasks() {
    return tasks;
  }

  public VersionRegistry versions() {
    return versions;
  }

  public StateStore stateStore() {
    return stateStore;
  }

  public SearchCalls searchCalls() {
    return searchCalls;
  }

  public BulkCalls bulkCalls() {
    return bulkCalls;
  }

  /** Advances every running bulk operation by one page now (the leader does it every second). */
  public int stepBulkOperations() {
    return bulkRunner.stepAll();
  }

  public StateWaits stateWaits() {
    return stateWaits;
  }

  public RunEnds runEnds() {
    return runEnds;
  }

  public WorkerSightings sightings() {
    return sightings;
  }

  public WorkerStore workerStore() {
    return workerStore;
  }

  public Starts starts() {
    return starts;
  }

  public Completions completions() {
    return completions;
  }

  public FlowStore flowStore() {
    return flowStore;
  }

  public ChainStore chainStore() {
    return chainStore;
  }

  public WorkerCalls calls() {
    return calls;
  }

  public RunCalls runCalls() {
    return runCalls;
  }

  public CallbackCalls callbackCalls() {
    return callbackCalls;
  }

  public UpdateCalls updateCalls() {
    return updateCalls;
  }

  public CodeRegistrations registrations() {
    return registrations;
  }

  /** The workflows whose runs stick to their worker, as last read. */
  public StickyWorkflows sticky() {
    return sticky;
  }

  /** Schedules' past ticks run now. */
  public Backfills backfills() {
    return backfills;
  }

  public StreamWrites streamWrites() {
    return streamWrites;
  }

  public Leadership leadership() {
    return leadership;
  }

  /** Stops the jobs, the waits' timers, and the LISTEN and leader connections. */
  @Override
  public void close() {
    longPoll.endWaits();
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception e) {
        log.warn("error while stopping: {}", e.getMessage());
      }
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
