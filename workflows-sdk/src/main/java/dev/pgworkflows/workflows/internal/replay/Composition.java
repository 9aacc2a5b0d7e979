package dev.pgworkflows.workflows.internal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pgworkflows.protocol.ChildStartRequest;
import dev.pgworkflows.protocol.Next;
import dev.pgworkflows.protocol.StartResult;
import dev.pgworkflows.protocol.StepRecord;
import dev.pgworkflows.protocol.Wait;
import dev.pgworkflows.workflows.Arm;
import dev.pgworkflows.workflows.ChildOptions;
import dev.pgworkflows.workflows.ChildRun;
import dev.pgworkflows.workflows.Fired;
import dev.pgworkflows.workflows.NonDeterministicWorkflowException;
import dev.pgworkflows.workflows.Workflow;
import dev.pgworkflows.workflows.internal.http.Transport;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;

/**
 * The composing verbs: starting child runs and waiting on several arms (signals, child ends, a
 * timeout). A child is started by a step of kind {@code child}, exactly once (the server derives
 * the child's key from the parent run and the step); its result is a durable wait on its end.
 */
final class Composition {
  private static final int MAX_ARMS = 64;

  private final Journal journal;
  private final RunCompletion completion;
  private final Lease lease;
  private final StepTracing tracing;
  private final StepExecution steps;
  private final InstantSource clock;

  Composition(
      Journal journal,
      RunCompletion completion,
      Lease lease,
      StepTracing tracing,
      StepExecution steps,
      InstantSource clock) {
    this.journal = journal;
    this.completion = completion;
    this.lease = lease;
    this.tracing = tracing;
    this.steps = steps;
    this.clock = clock;
  }

  <O> ChildRun<O> startChild(
      String name, String workflow, Object input, Type output, ChildOptions options) {
    steps.checkOutsideStep(name);
    Workflow.checkName(workflow);
    if (name != null && name.length() > 121) {
      throw new IllegalArgumentException(
          "a child's step name must be at most 121 characters (its result is <name>.result)");
    }
    ChildOptions o = options == null ? ChildOptions.builder().build() : options;
    Task.Entry e = journal.replayed(name, "child");
    if (e != null) {
      return new Child<>(name, e.output().path("runId").asLong(), workflow, output);
    }
    steps.beforeNewStep();
    Instant started = clock.instant();
    long t0 = System.nanoTime();
    ChildStartRequest request =
        new ChildStartRequest(
            name,
            workflow,
            Transport.JSON.valueToTree(input),
            o.version(),
            o.onParentCancel().name().toLowerCase(Locale.ROOT),
            o.retentionDays(),
            o.concurrencyKey(),
            o.priority(),
            o.deadline() == null ? null : o.deadline().toMillis());
    Span span = tracing.start(name, "child", 1);
    StartResult r;
    Scope scope = span.makeCurrent();
    try {
      r = lease.startChild(request);
    } finally {
      scope.close();
      span.end();
    }
    if ("stale".equals(r.status())) {
      throw new Suspend(Suspend.Why.LEASE_LOST);
    }
    ObjectNode out = Transport.JSON.createObjectNode();
    out.put("runId", r.runId());
    out.put("workflow", workflow);
    completion.hold(
        name,
        steps.state().attach(new StepRecord(name, "child", out, null, started), null),
        (System.nanoTime() - t0) / 1e9,
        span);
    journal.append(new Task.Entry(name, "child", out, null, false));
    steps.journaled();
    return new Child<>(name, r.runId(), workflow, output);
  }

  /**
   * Waits for the arms: the first ({@code all} false) or every one, or the timeout (null: none).
   */
  Fired await(String name, List<Arm> arms, boolean all, Duration timeout) {
    steps.checkOutsideStep(name);
    if (arms == null || arms.isEmpty() || arms.size() > MAX_ARMS) {
      throw new IllegalArgumentException("a wait needs 1 to " + MAX_ARMS + " arms");
    }
    if (new HashSet<>(arms).size() != arms.size()) {
      throw new IllegalArgumentException("a wait's arms must differ from one another");
    }
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be zero or positive");
    }
    Task.Entry e = journal.replayed(name, "wait");
    if (e != null) {
      return fired(name, arms, e);
    }
    long called = System.nanoTime();
    Instant now = clock.instant();
    steps.beforeNewStep();
    List<Wait.Arm> wire = new ArrayList<>();
    for (Arm a : arms) {
      wire.add(new Wait.Arm(a.event(), Transport.JSON.valueToTree(a.match().document())));
    }
    Wait wait = new Wait(name, null, null, wire, all);
    Next next =
        timeout == null
            ? new Next(null, null, null, wait, null)
            : new Next(null, timeout.toMillis(), null, wait, null);
    StepRecord carrier = steps.state().carrier(now);
    String outcome = tracing.traced(name, "wait", 1, () -> lease.suspend(carrier, next, called));
    throw new Suspend("ok".equals(outcome) ? Suspend.Why.WAITING : Suspend.Why.LEASE_LOST);
  }

  private static Fired fired(String name, List<Arm> arms, Task.Entry e) {
    JsonNode fired = e.output() == null ? null : e.output().get("fired");
    if (fired == null || !fired.isArray()) {
      throw new NonDeterministicWorkflowException(
          "step \"" + name + "\" is a wait on several arms in the code but not in the journal");
    }
    ArrayNode a = (ArrayNode) fired;
    if (a.size() != arms.size()) {
      throw new NonDeterministicWorkflowException(
          "wait \""
              + name
              + "\" has "
              + arms.size()
              + " arms in the code but "
              + a.size()
              + " in the journal");
    }
    List<JsonNode> payloads = new ArrayList<>();
    for (int i = 0; i < a.size(); i++) {
      JsonNode arm = a.get(i);
      if (arm != null && !arm.isNull() && !arm.path("event").asText().equals(arms.get(i).event())) {
        throw new NonDeterministicWorkflowException(
            "wait \"" + name + "\" arm " + i + " waits for another event than the journal's");
      }
      payloads.add(arm == null || arm.isNull() ? null : arm.get("payload"));
    }
    return new Fired(arms, payloads, e.timedOut());
  }

  /** A started child: its result is a wait, with no timeout, for its end. */
  private final class Child<O> implements ChildRun<O> {
    private final String step;
    private final long runId;
    private final String workflow;
    private final Type output;

    Child(String step, long runId, String workflow, Type output) {
      this.step = step;
      this.runId = runId;
      this.workflow = workflow;
      this.output = output;
    }

    @Override
    public String step() {
      return step;
    }

    @Override
    public long runId() {
      return runId;
    }

    @Override
    public String workflow() {
      return workflow;
    }

    @Override
    public Arm ended() {
      return Arm.event(ChildEnds.event(runId));
    }

    @Override
    public O result() {
      String wait = step + ".result";
      steps.checkOutsideStep(wait);
      Task.Entry e = journal.replayed(wait, "wait");
      if (e != null) {
        return ChildEnds.output(e.output(), output);
      }
      steps.beforeNewStep();
      Next next = new Next(null, null, null, new Wait(wait, ChildEnds.event(runId), null), null);
      StepRecord carrier = steps.state().carrier(clock.instant());
      String outcome = tracing.traced(wait, "wait", 1, () -> lease.suspend(carrier, next));
      throw new Suspend("ok".equals(outcome) ? Suspend.Why.WAITING : Suspend.Why.LEASE_LOST);
    }
  }
}
