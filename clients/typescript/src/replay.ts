import { randomUUID as cryptoUUID } from "node:crypto";
import { type WorkflowRef, nameOf } from "./client.js";
import { type Duration, millis } from "./duration.js";
import {
  ChildFailedError,
  InvalidRequestError,
  type JournalError,
  NonDeterministicWorkflowError,
  StepFailedError,
  StepTimeoutError,
  journalError,
} from "./errors.js";
import { sleep, toJson } from "./http.js";
import { type JournalEntry, type Lease, type StepRow } from "./lease.js";
import { checkEventName, checkStepName } from "./names.js";
import { type Policy, type RetryPolicy, delayAfter, policyOf, withOperatorOptions } from "./retry.js";

/** What a step's function is given. */
export interface StepContext {
  /** Aborted when the run is cancelled or its lease is lost, and when the attempt times out. */
  readonly signal: AbortSignal;
  /** The attempt, from 1. */
  readonly attempt: number;
}

/** One event of a wait on several: its name and, optionally, what its payload must contain. */
export interface Arm {
  event: string;
  match?: Record<string, unknown>;
}

/** An arm that fired: its event and the payload that fired it. */
export interface Fired {
  event: string;
  payload: unknown;
}

/** The durable verbs of a body. Each is named; the name is unique within the run. */
export interface Steps {
  /** Runs {@code fn} once (retried per {@code retry}), journals and returns its result. */
  run<T>(
    name: string,
    fn: (step: StepContext) => T | Promise<T>,
    options?: { retry?: RetryPolicy },
  ): Promise<T>;
  /** Sleeps durably: the run comes back after {@code duration}, on any worker. */
  sleep(name: string, duration: Duration): Promise<void>;
  /**
   * Waits for a signal of {@code event} (default: the step's name) whose payload contains {@code
   * match}; its payload, or null once {@code timeout} passed (none: no timeout).
   */
  waitForEvent<T = unknown>(
    name: string,
    options?: { event?: string; match?: Record<string, unknown>; timeout?: Duration },
  ): Promise<T | null>;
  /** Waits for the first of the arms: one entry per arm, null where it did not fire. */
  waitForAny(
    name: string,
    arms: Arm[],
    options?: { timeout?: Duration },
  ): Promise<Array<Fired | null> | null>;
  /** Waits until every arm fired (or the timeout: null). */
  waitForAll(
    name: string,
    arms: Arm[],
    options?: { timeout?: Duration },
  ): Promise<Array<Fired | null> | null>;
  /** Starts a child run of {@code workflow} (once) and returns its output when it completes. */
  invoke<T = unknown>(name: string, workflow: WorkflowRef, input?: unknown): Promise<T>;
}

/**
 * The run's state: keys with JSON values, kept with the journal (each change goes with the next
 * row the worker journals) and readable from outside while the run goes on (GET .../state).
 */
export interface RunState {
  get<T = unknown>(key: string): T | undefined;
  /** Sets a key (1 to 128 of a-z, A-Z, 0-9, ".", "_", "-"); null or undefined removes it. */
  set(key: string, value: unknown): void;
  delete(key: string): void;
  /** Every key set, with its value. */
  all(): Record<string, unknown>;
}

/** What a body is given besides its input. */
export interface WorkflowContext {
  readonly runId: number;
  readonly workflow: string;
  readonly version: number;
  /** Aborted when the run is cancelled or its lease is lost: thread it into long work. */
  readonly signal: AbortSignal;
  readonly step: Steps;
  /** The run's state, as of this point of the body. */
  readonly state: RunState;
  /** The time, journaled the first time: the same on every replay. */
  now(): Promise<Date>;
  /** A random UUID, journaled the first time: the same on every replay. */
  randomUUID(): Promise<string>;
  /** Ends this run and starts its successor with {@code input} and a fresh journal. */
  continueAsNew(input: unknown): Promise<never>;
}

/** How a run's execution on this worker ended. */
export type Outcome =
  | { kind: "completed"; output: unknown }
  | { kind: "failed"; error: JournalError }
  | { kind: "suspended" };

const NEVER: Promise<never> = new Promise(() => undefined);

/**
 * One execution of a run's body against its journal: journaled steps return what they returned,
 * the first new one runs, and the run suspends where the server must bring it back (a sleep, a
 * wait, a retry's backoff) or ends.
 */
export class Execution implements WorkflowContext, Steps {
  readonly runId: number;
  readonly workflow: string;
  readonly version: number;
  readonly step: Steps = this;
  private readonly journal = new Map<string, JournalEntry>();
  /** The journal's rows in order, and how many of them the body has passed (their state applied). */
  private readonly rows: JournalEntry[];
  private readonly order = new Map<string, number>();
  private passed = 0;
  /** The state of the rows passed, and the body's changes since, to go with its next row. */
  private readonly applied = new Map<string, unknown>();
  private pending: Record<string, unknown> = {};
  private carriers: number;
  private readonly seen = new Set<string>();
  private nextAttempt: number;
  private inFlight = 0;
  private counters = { now: 0, uuid: 0 };
  private suspend!: () => void;
  private readonly suspended = new Promise<void>((resolve) => {
    this.suspend = resolve;
  });
  private done = false;

  constructor(
    private readonly lease: Lease,
    workflow: string,
    private readonly stopping: () => boolean,
  ) {
    const t = lease.task;
    this.runId = t.runId;
    this.workflow = workflow;
    this.version = t.version;
    this.nextAttempt = Math.max(1, t.attempt);
    this.rows = t.journal ?? [];
    this.rows.forEach((e, i) => {
      this.journal.set(e.name, e);
      this.order.set(e.name, i);
    });
    this.carriers = this.rows.filter((e) => e.name.startsWith("__state.")).length;
  }

  readonly state: RunState = {
    get: <T>(key: string): T | undefined => {
      if (Object.prototype.hasOwnProperty.call(this.pending, key)) {
        const v = this.pending[key];
        return v === null ? undefined : (v as T);
      }
      return this.applied.get(key) as T | undefined;
    },
    set: (key: string, value: unknown) => {
      if (typeof key !== "string" || !/^[a-zA-Z0-9._-]{1,128}$/.test(key) || key.startsWith("__")) {
        throw new InvalidRequestError(
          `state key ${JSON.stringify(key)} must be 1 to 128 characters of a-z, A-Z, 0-9, ".", "_" and "-", not starting with "__"`,
          { field: "state" },
        );
      }
      this.pending[key] = value === undefined ? null : JSON.parse(toJson(value, `state ${key}`));
    },
    delete: (key: string) => this.state.set(key, null),
    all: () => {
      const out: Record<string, unknown> = Object.fromEntries(this.applied);
      for (const [k, v] of Object.entries(this.pending)) {
        if (v === null) delete out[k];
        else out[k] = v;
      }
      return out;
    },
  };

  /**
   * The body passed journaled row {@code e}: the state of every row up to it applies, and the
   * body's changes before it went with it or an earlier row.
   */
  private pass(e: JournalEntry): void {
    const at = this.order.get(e.name) ?? -1;
    while (this.passed <= at) {
      const changes = this.rows[this.passed++]!.state;
      for (const [k, v] of Object.entries(changes ?? {})) {
        if (v === null) this.applied.delete(k);
        else this.applied.set(k, v);
      }
    }
    this.pending = {};
  }

  /** The body's changes since its last row, to journal with the next; none when it made none. */
  private takeChanges(): Record<string, unknown> | undefined {
    if (Object.keys(this.pending).length === 0) {
      return undefined;
    }
    const changes = this.pending;
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) this.applied.delete(k);
      else this.applied.set(k, v);
    }
    this.pending = {};
    return changes;
  }

  /** Journals the body's changes in a row of their own, before a write that carries no row. */
  private async carryChanges(): Promise<boolean> {
    const state = this.takeChanges();
    if (state === undefined) {
      return true;
    }
    const name = `__state.${++this.carriers}`;
    return (await this.lease.journal([{ name, kind: "run", output: null, state }])) === "ok";
  }

  get signal(): AbortSignal {
    return this.lease.lost.signal;
  }

  /** Runs the body to its end or its suspension. */
  async execute(body: (ctx: WorkflowContext, input: any) => Promise<unknown>): Promise<Outcome> {
    const ran = (async () => body(this, this.lease.task.input))().then(
      (output): Outcome => ({ kind: "completed", output }),
      (e): Outcome => ({ kind: "failed", error: journalError(e, e instanceof StepFailedError ? e.step : undefined) }),
    );
    const outcome = await Promise.race([ran, this.suspended.then((): Outcome => ({ kind: "suspended" }))]);
    this.done = true;
    return outcome;
  }

  /** The body's last changes, in a row of their own, before the run's end; false if refused. */
  async beforeEnd(): Promise<boolean> {
    return this.carryChanges();
  }

  /** Stops the body here: the server brings the run back (or another worker has it). */
  private halt(): Promise<never> {
    this.done = true;
    this.suspend();
    return NEVER;
  }

  /** The journaled entry of {@code name}, checked to be of {@code kind}; undefined when new. */
  private replayed(name: string, kind: string): JournalEntry | undefined {
    if (this.seen.has(name)) {
      throw new InvalidRequestError(`step ${name} is called twice in one run: step names are unique`, {
        field: "step",
      });
    }
    this.seen.add(name);
    const e = this.journal.get(name);
    if (e && e.kind !== kind) {
      throw new NonDeterministicWorkflowError(
        `step ${name} is a ${kind} step now, but the run's journal has it as a ${e.kind} step: the body is not deterministic`,
      );
    }
    if (e) {
      this.pass(e);
    }
    return e;
  }

  /** Before anything new: a closing worker hands the run back to continue elsewhere. */
  private async beforeNew(): Promise<boolean> {
    if (this.done || this.lease.lost.signal.aborted) {
      await this.halt();
      return false;
    }
    if (this.stopping()) {
      await this.lease.retry(0);
      await this.halt();
      return false;
    }
    return true;
  }

  // ---- run

  async run<T>(
    name: string,
    fn: (step: StepContext) => T | Promise<T>,
    options: { retry?: RetryPolicy } = {},
  ): Promise<T> {
    checkStepName(name);
    if (typeof fn !== "function") {
      throw new InvalidRequestError(`step ${name} needs a function to run`, { field: "fn" });
    }
    const e = this.replayed(name, "run");
    if (e) {
      if (e.error) {
        throw new StepFailedError(name, e.error);
      }
      return e.output as T;
    }
    const policy = withOperatorOptions(policyOf(options.retry), this.lease.task.stepOptions, name);
    if (!(await this.beforeNew())) {
      return NEVER;
    }
    this.inFlight++;
    try {
      return await this.attempts(name, fn, policy);
    } finally {
      this.inFlight--;
    }
  }

  private async attempts<T>(
    name: string,
    fn: (step: StepContext) => T | Promise<T>,
    policy: Policy,
  ): Promise<T> {
    let attempt = this.nextAttempt;
    for (;;) {
      const startedAt = new Date().toISOString();
      let output: T;
      let text: string;
      try {
        output = await this.attempt(fn, attempt, policy.timeoutMs);
        text = toJson(output, `the output of step ${name}`);
      } catch (failure) {
        if (this.lease.lost.signal.aborted || this.done) {
          return this.halt();
        }
        const error = journalError(failure);
        if (attempt < policy.attempts && policy.retryable(failure)) {
          const delay = delayAfter(policy, attempt);
          if (this.inFlight > 1) {
            // Other steps of a group are running: retry here, as the protocol asks of a group.
            await sleep(delay);
            attempt++;
            continue;
          }
          await this.lease.retry(delay, name, error);
          return this.halt();
        }
        const outcome = await this.lease.journal([
          { name, kind: "run", error, startedAt, state: this.takeChanges() },
        ]);
        if (outcome !== "ok") {
          return this.halt();
        }
        this.nextAttempt = 1;
        throw new StepFailedError(name, error);
      }
      const row: StepRow = {
        name,
        kind: "run",
        output: JSON.parse(text),
        startedAt,
        state: this.takeChanges(),
      };
      const outcome = await this.lease.journal([row]);
      if (outcome !== "ok") {
        return this.halt();
      }
      this.nextAttempt = 1;
      // What a replay would return: the journaled JSON, not the live object.
      return row.output as T;
    }
  }

  private async attempt<T>(
    fn: (step: StepContext) => T | Promise<T>,
    attempt: number,
    timeoutMs: number | undefined,
  ): Promise<T> {
    const controller = new AbortController();
    const lost = this.lease.lost.signal;
    const onLost = () => controller.abort(lost.reason);
    lost.addEventListener("abort", onLost, { once: true });
    let timer: NodeJS.Timeout | undefined;
    try {
      const running = Promise.resolve().then(() => fn({ signal: controller.signal, attempt }));
      if (timeoutMs === undefined) {
        return await running;
      }
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const e = new StepTimeoutError(`the attempt ran past its timeout of ${timeoutMs} ms`);
          controller.abort(e);
          reject(e);
        }, timeoutMs);
      });
      return await Promise.race([running, timedOut]);
    } finally {
      if (timer) clearTimeout(timer);
      lost.removeEventListener("abort", onLost);
    }
  }

  // ---- sleep and waits

  async sleep(name: string, duration: Duration): Promise<void> {
    checkStepName(name);
    const delayMs = millis(duration, "duration");
    if (this.replayed(name, "sleep")) {
      return;
    }
    if (!(await this.beforeNew())) {
      return NEVER;
    }
    const called = Date.now();
    await this.lease.complete({
      step: {
        name,
        kind: "sleep",
        startedAt: new Date(called).toISOString(),
        output: { until: new Date(called + delayMs).toISOString() },
        state: this.takeChanges(),
      },
      next: { delayMs: Math.max(0, delayMs - (Date.now() - called)) },
    });
    return this.halt();
  }

  async waitForEvent<T = unknown>(
    name: string,
    options: { event?: string; match?: Record<string, unknown>; timeout?: Duration } = {},
  ): Promise<T | null> {
    checkStepName(name);
    const event = checkEventName(options.event ?? name);
    const match = options.match ?? {};
    toJson(match, `the match of step ${name}`);
    const e = this.replayed(name, "wait");
    if (e) {
      return e.timedOut ? null : (e.output as T);
    }
    return this.waitNew({ step: name, event, match }, options.timeout);
  }

  waitForAny(name: string, arms: Arm[], options: { timeout?: Duration } = {}) {
    return this.waitArms(name, arms, false, options.timeout);
  }

  waitForAll(name: string, arms: Arm[], options: { timeout?: Duration } = {}) {
    return this.waitArms(name, arms, true, options.timeout);
  }

  private async waitArms(
    name: string,
    arms: Arm[],
    all: boolean,
    timeout: Duration | undefined,
  ): Promise<Array<Fired | null> | null> {
    checkStepName(name);
    if (!Array.isArray(arms) || arms.length === 0 || arms.length > 64) {
      throw new InvalidRequestError(`a wait needs 1 to 64 arms, got ${arms?.length}`, { field: "arms" });
    }
    const sent = arms.map((a) => {
      checkEventName(a.event);
      return a.match === undefined ? { event: a.event } : { event: a.event, match: a.match };
    });
    const e = this.replayed(name, "wait");
    if (e) {
      return e.timedOut ? null : ((e.output as { fired: Array<Fired | null> }).fired ?? null);
    }
    return this.waitNew({ step: name, arms: sent, all }, timeout) as Promise<Array<Fired | null> | null>;
  }

  private async waitNew(wait: Record<string, unknown>, timeout: Duration | undefined): Promise<never> {
    const delayMs = timeout === undefined ? undefined : millis(timeout, "timeout");
    if (!(await this.beforeNew())) {
      return NEVER;
    }
    const next: Record<string, unknown> = { wait };
    if (delayMs !== undefined) next.delayMs = delayMs;
    if (!(await this.carryChanges())) {
      return this.halt();
    }
    await this.lease.complete({ next });
    return this.halt();
  }

  // ---- children

  async invoke<T = unknown>(name: string, workflow: WorkflowRef, input?: unknown): Promise<T> {
    checkStepName(name);
    if (name.length > 121) {
      throw new InvalidRequestError(
        `a child's step name must be at most 121 characters (its result is <name>.result)`,
        { field: "step" },
      );
    }
    const child = decodeURIComponent(nameOf(workflow));
    const started = this.replayed(name, "child");
    const resultStep = `${name}.result`;
    if (started) {
      const childRun = (started.output as { runId: number }).runId;
      const ended = this.replayed(resultStep, "wait");
      if (ended) {
        const end = ended.output as { status: string; output: unknown; error?: JournalError };
        if (end.status !== "completed") {
          throw new ChildFailedError(child, childRun, end.status, end.error);
        }
        return end.output as T;
      }
      return this.waitNew({ step: resultStep, event: `__child.${childRun}`, match: {} }, undefined);
    }
    if (!(await this.beforeNew())) {
      return NEVER;
    }
    const startedAt = new Date().toISOString();
    const run = await this.lease.startChild({
      step: name,
      workflow: child,
      input: JSON.parse(toJson(input === undefined ? null : input, `the input of child ${name}`)),
    });
    this.seen.add(resultStep);
    await this.lease.complete({
      step: {
        name,
        kind: "child",
        output: { runId: run.runId, workflow: child },
        startedAt,
        state: this.takeChanges(),
      },
      next: { wait: { step: resultStep, event: `__child.${run.runId}`, match: {} } },
    });
    return this.halt();
  }

  // ---- journaled values and the run's end

  async now(): Promise<Date> {
    const name = `__now.${++this.counters.now}`;
    const e = this.journal.get(name);
    if (e) {
      this.pass(e);
      return new Date(e.output as string);
    }
    const at = new Date();
    await this.value(name, at.toISOString());
    return at;
  }

  async randomUUID(): Promise<string> {
    const name = `__uuid.${++this.counters.uuid}`;
    const e = this.journal.get(name);
    if (e) {
      this.pass(e);
      return e.output as string;
    }
    const id = cryptoUUID();
    await this.value(name, id);
    return id;
  }

  private async value(name: string, output: string): Promise<void> {
    if (!(await this.beforeNew())) {
      return NEVER;
    }
    if ((await this.lease.journal([{ name, kind: "run", output, state: this.takeChanges() }])) !== "ok") {
      return this.halt();
    }
    this.nextAttempt = 1;
  }

  async continueAsNew(input: unknown): Promise<never> {
    const text = toJson(input === undefined ? null : input, "the successor's input");
    if (!(await this.beforeNew())) {
      return NEVER;
    }
    if (!(await this.carryChanges())) {
      return this.halt();
    }
    await this.lease.continueAsNew(JSON.parse(text));
    return this.halt();
  }
}
