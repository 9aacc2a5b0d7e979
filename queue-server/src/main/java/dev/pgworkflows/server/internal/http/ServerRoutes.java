package dev.pgworkflows.server.internal.http;

import dev.pgworkflows.engine.internal.host.EngineCore;
import dev.pgworkflows.engine.internal.maintenance.WebhookTargets;
import dev.pgworkflows.engine.internal.runtime.StreamFollowers;
import dev.pgworkflows.engine.internal.runtime.TaskStreams;
import dev.pgworkflows.engine.internal.runtime.WorkerCalls;
import dev.pgworkflows.engine.internal.store.AuditStore;
import dev.pgworkflows.engine.internal.store.BlockerStore;
import dev.pgworkflows.engine.internal.store.OperationsStore;
import dev.pgworkflows.engine.internal.store.RunStore;
import dev.pgworkflows.engine.internal.store.RunStreamStore;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.engine.internal.store.Sql;
import dev.pgworkflows.engine.internal.store.StepRetryStore;
import dev.pgworkflows.engine.internal.store.TopicStore;
import dev.pgworkflows.server.internal.telemetry.Metrics;
import dev.pgworkflows.server.internal.telemetry.Tracing;
import io.javalin.config.RoutesConfig;
import java.time.InstantSource;
import java.util.List;
import java.util.function.Consumer;

/** Every route of the server over one engine, the worker protocol's and the runs' first. */
public final class ServerRoutes {
  private ServerRoutes() {}

  /** What the routes answer from besides the engine. */
  public record Parts(
      Sql sql,
      TaskStreams streams,
      StreamFollowers followers,
      Metrics metrics,
      Tracing tracing,
      AuditStore audit,
      WebhookTargets webhookTargets,
      InstantSource clock,
      long workerExpiryMs) {}

  /** The registrations of every route, in the order the server registers them. */
  public static List<Consumer<RoutesConfig>> of(EngineCore core, Parts p) {
    RunStore runs = core.runs();
    WorkerCalls calls = core.calls();
    StartRoutes startRoutes = new StartRoutes(core.runCalls(), p.tracing());
    RunRoutes runRoutes = new RunRoutes(runs, core.runCalls(), p.tracing());
    OperationsStore operations = new OperationsStore(p.sql());
    TaskStreams streams = p.streams();
    return List.of(
        // The worker protocol's and the runs' routes, the busiest, first.
        new PollRoutes(calls)::register,
        new StreamRoutes(streams, core.versions(), core.sightings(), core.sticky())::register,
        new CompletionRoutes(core.completions(), calls, streams, p.clock())::register,
        new LeaseRoutes(calls, streams)::register,
        new JournalTailRoutes(calls)::register,
        new JournalRoutes(calls)::register,
        new ChainRoutes(core.chainStore(), runs, calls, core.runCalls(), streams, p.tracing())
            ::register,
        runRoutes::registerIndex,
        startRoutes::register,
        runRoutes::register,
        new StateRoutes(runs, core.stateStore(), core.stateWaits())::register,
        new SearchRoutes(core.searchCalls())::register,
        new BulkRoutes(core.bulkCalls())::register,
        new RunControlRoutes(operations, runs)::register,
        new StepRetryRoutes(new StepRetryStore(p.sql()), runs)::register,
        new ChildRoutes(calls, p.tracing())::register,
        new ScheduleRoutes(
                new ScheduleStore(p.sql()), core.registrations(), core.backfills(), p.clock())
            ::register,
        new FlowRoutes(core.flowStore(), calls, core.registrations(), core.sticky())::register,
        new CallbackRoutes(core.callbackCalls())::register,
        new UpdateRoutes(core.updateCalls(), p.tracing())::register,
        new HealthRoutes(p.sql(), core::listening)::register,
        new UiRoutes()::register,
        p.metrics()::register,
        new QueueRoutes(core.queues())::register,
        new MessageRoutes(core.queues(), core.longPoll(), core.timers(), p.clock())::register,
        new GroupRoutes(operations)::register,
        new TopicRoutes(new TopicStore(p.sql()), core.delivery()::nudge, p.webhookTargets())
            ::register,
        new BlockerRoutes(new BlockerStore(p.sql()), p.workerExpiryMs())::register,
        new RunStreamRoutes(new RunStreamStore(p.sql()), core.streamWrites(), p.followers())
            ::register,
        new WorkerRoutes(core.workerStore(), p.workerExpiryMs())::register,
        new AuditRoutes(p.audit())::register);
  }
}
