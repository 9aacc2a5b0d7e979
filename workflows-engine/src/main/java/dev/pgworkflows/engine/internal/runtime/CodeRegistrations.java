package dev.pgworkflows.engine.internal.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.pgworkflows.engine.internal.checks.ApiException;
import dev.pgworkflows.engine.internal.checks.FlowChecks;
import dev.pgworkflows.engine.internal.checks.ScheduleChecks;
import dev.pgworkflows.engine.internal.json.Json;
import dev.pgworkflows.engine.internal.store.FlowStore;
import dev.pgworkflows.engine.internal.store.ScheduleStore;
import dev.pgworkflows.protocol.CancelOnRule;
import dev.pgworkflows.protocol.CancelOnRules;
import dev.pgworkflows.protocol.ConcurrencyLimit;
import dev.pgworkflows.protocol.ScheduleRegistration;
import dev.pgworkflows.protocol.ScheduleRequest;
import dev.pgworkflows.protocol.ScheduleState;
import dev.pgworkflows.protocol.ThrottleSettings;
import dev.pgworkflows.protocol.WorkerRouting;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;

/**
 * What a worker registers from its workflow's definition as it starts: the schedules declared in
 * code (source {@code code}, replacing the ones registered before) and the workflow's concurrency
 * limit and cancel-on rules. Every field is checked before any I/O (the cancel-on rules' by the
 * function that stores them, which refuses a bad one before it changes anything).
 */
public final class CodeRegistrations {
  public static final int MAX_REGISTERED = 100;

  private final ScheduleStore schedules;
  private final FlowStore flow;
  private final StickyWorkflows sticky;
  private final InstantSource clock;

  public CodeRegistrations(
      ScheduleStore schedules, FlowStore flow, StickyWorkflows sticky, InstantSource clock) {
    this.schedules = schedules;
    this.flow = flow;
    this.sticky = sticky;
    this.clock = clock;
  }

  /** Registers the schedules of {@code workflow}'s definition; answers them as stored. */
  public List<ScheduleState> schedules(String workflow, ScheduleRegistration req) {
    if (req.schedules() == null) {
      throw ApiException.badRequest("schedules", "schedules is required");
    }
    if (req.schedules().size() > MAX_REGISTERED) {
      throw ApiException.badRequest(
          "schedules", "schedules may hold at most " + MAX_REGISTERED + " schedules");
    }
    List<ScheduleStore.Settings> all = new ArrayList<>();
    for (int i = 0; i < req.schedules().size(); i++) {
      String at = "schedules[" + i + "].";
      ScheduleRequest s = req.schedules().get(i);
      if (s == null) {
        throw ApiException.badRequest("schedules[" + i + "]", "schedules[" + i + "] is null");
      }
      if (s.workflow() != null && !s.workflow().equals(workflow)) {
        throw ApiException.badRequest(
            at + "workflow", at + "workflow must be absent or the path's \"" + workflow + "\"");
      }
      ScheduleStore.Settings checked =
          ScheduleChecks.check(
              s, s.name() == null ? workflow : s.name(), workflow, at, clock.instant());
      if (all.stream().anyMatch(o -> o.name().equals(checked.name()))) {
        throw ApiException.badRequest(
            at + "name", at + "name \"" + checked.name() + "\" is given twice");
      }
      all.add(checked);
    }
    return schedules.register(all);
  }

  /** Sets the concurrency limit of {@code workflow}'s definition; answers it as stored. */
  public ConcurrencyLimit concurrency(String workflow, ConcurrencyLimit req) {
    if (req.limit() == null) {
      throw ApiException.badRequest(
          "limit", "limit is required (PUT /v1/workflows/{name}/concurrency removes a limit)");
    }
    return flow.setConcurrencyLimit(workflow, FlowChecks.concurrency(req)).orElseThrow();
  }

  /** Sets the throttle of {@code workflow}'s definition; answers it as stored. */
  public ThrottleSettings throttle(String workflow, ThrottleSettings req) {
    if (req.limit() == null) {
      throw ApiException.badRequest(
          "limit", "limit is required (PUT /v1/workflows/{name}/throttle removes a throttle)");
    }
    return flow.setThrottle(workflow, FlowChecks.throttle(req)).orElseThrow();
  }

  /**
   * Sets which workers take {@code workflow}'s tasks, from its definition; answers the routing as
   * stored (any worker: {@code require} and {@code prefer} null, {@code sticky} false).
   */
  public WorkerRouting routing(String workflow, WorkerRouting req) {
    WorkerRouting set =
        flow.setWorkerRouting(workflow, FlowChecks.routing(req))
            .orElse(new WorkerRouting(workflow, null, null, false));
    sticky.refresh();
    return set;
  }

  /** Replaces the cancel-on rules of {@code workflow}'s definition; answers them as stored. */
  public CancelOnRules cancelOn(String workflow, CancelOnRules req) {
    if (req.rules() == null) {
      throw ApiException.badRequest("rules", "rules is required ([] removes them all)");
    }
    return rules(workflow, flow.setCancelOn(workflow, Json.write(req.rules())));
  }

  /** The cancel-on rules of {@code workflow}. */
  public CancelOnRules cancelOn(String workflow) {
    return rules(workflow, flow.cancelOn(workflow));
  }

  private static CancelOnRules rules(String workflow, String json) {
    try {
      return new CancelOnRules(
          workflow, Json.MAPPER.readValue(json, new TypeReference<List<CancelOnRule>>() {}));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("the stored cancel-on rules do not read back: " + json, e);
    }
  }
}
