import { type Duration, millis } from "./duration.js";
import {
  InvalidRequestError,
  type JournalError,
  NotFoundError,
  RunFailedError,
  WorkflowError,
} from "./errors.js";
import { type ServerOptions, Transport, sleep, toJson } from "./http.js";
import { checkEventName } from "./names.js";

/** How a run is started; every field optional. */
export interface StartOptions {
  /** A repeat of the key starts nothing and answers the run the first start made. */
  idempotencyKey?: string;
  /** Days the run is kept after it ends (the server caps it). */
  retentionDays?: number;
  /** The version to run; the newest a worker registered when absent. */
  version?: number;
  /** The run's concurrency key. */
  concurrencyKey?: string;
  /** 0 to 9, higher first. */
  priority?: number;
  /** The run's first task is due this long after the start. */
  delay?: Duration;
  /** The server ends the run as timed_out if it is still running this long after it is due. */
  deadline?: Duration;
  /** Search attributes of the new run (each defined by an operator). */
  attributes?: Record<string, unknown>;
}

/** What a start answers. */
export interface Started {
  runId: number;
  status: string;
  /** False when an earlier start with the idempotency key made the run. */
  created: boolean;
}

/** A run as the server shows it. */
export interface RunInfo {
  runId: number;
  workflow: string;
  version: number;
  status: "running" | "completed" | "failed" | "cancelled" | "timed_out";
  input: unknown;
  output?: unknown;
  error?: JournalError;
  startedAt: string;
  completedAt?: string;
  [field: string]: unknown;
}

/** What a signal answers: delivered to a wait, buffered for a later one, or a duplicate. */
export interface SignalOutcome {
  outcome: string;
  signalId?: number;
  [field: string]: unknown;
}

/** A workflow to name in a call: its name, or a definition (which has one). */
export type WorkflowRef = string | { readonly name: string; readonly retentionDays?: number };

/** Starts, signals, reads and cancels runs of any workflow served against the same server. */
export interface WorkflowClient {
  /** Starts a run of {@code workflow} with {@code input}. */
  start(workflow: WorkflowRef, input?: unknown, options?: StartOptions): Promise<Started>;
  /**
   * Sends run {@code runId} the event with {@code payload}. The workflow is looked up from the
   * run (the token needs scope read as well as start) unless this client started the run.
   */
  signal(
    runId: number,
    event: string,
    payload?: unknown,
    options?: { idempotencyKey?: string; workflow?: WorkflowRef },
  ): Promise<SignalOutcome>;
  runs: {
    /** The run, as the server shows it. */
    get(workflow: WorkflowRef, runId: number): Promise<RunInfo>;
    /** Cancels a running run (scope admin); false when it had ended already. */
    cancel(workflow: WorkflowRef, runId: number): Promise<boolean>;
    /**
     * The run's output once it completes; a RunFailedError when it fails, is cancelled or times
     * out; a WorkflowError when {@code timeout} passes first.
     */
    result<T = unknown>(workflow: WorkflowRef, runId: number, timeout?: Duration): Promise<T>;
  };
}

/** A client of the server at {@code options.url} (default $WORKFLOWS_URL or localhost:7700). */
export function createWorkflowClient(options: ServerOptions = {}): WorkflowClient {
  return new Client(new Transport(options));
}

/** The workflow's name as a path segment; the server judges it (a 400 naming it when bad). */
export function nameOf(workflow: WorkflowRef): string {
  const name = typeof workflow === "string" ? workflow : workflow?.name;
  if (typeof name !== "string" || name.length === 0) {
    throw new InvalidRequestError("a workflow must be named", { field: "name" });
  }
  return encodeURIComponent(name);
}

function runPath(workflow: WorkflowRef, runId: number): string {
  if (!Number.isSafeInteger(runId) || runId < 1) {
    throw new InvalidRequestError(`runId must be a positive whole number, got ${runId}`, {
      field: "runId",
    });
  }
  return `/v1/workflows/${nameOf(workflow)}/runs/${runId}`;
}

class Client implements WorkflowClient {
  /** The workflow of each run this client started: a signal to it needs no lookup. */
  private readonly started = new Map<number, string>();

  constructor(private readonly http: Transport) {}

  async start(workflow: WorkflowRef, input?: unknown, options: StartOptions = {}): Promise<Started> {
    const name = nameOf(workflow);
    const body: Record<string, unknown> = { input: input === undefined ? null : input };
    toJson(body.input, "the run's input");
    if (options.idempotencyKey !== undefined) body.idempotencyKey = options.idempotencyKey;
    const retention =
      options.retentionDays ?? (typeof workflow === "string" ? undefined : workflow.retentionDays);
    if (retention !== undefined) body.retentionDays = retention;
    if (options.version !== undefined) body.version = options.version;
    if (options.concurrencyKey !== undefined) body.concurrencyKey = options.concurrencyKey;
    if (options.priority !== undefined) body.priority = options.priority;
    if (options.delay !== undefined) body.delayMs = millis(options.delay, "delay");
    if (options.deadline !== undefined) body.deadlineMs = millis(options.deadline, "deadline");
    if (options.attributes !== undefined) body.attributes = options.attributes;
    // A start with a key may be repeated safely; one without is sent once.
    const answer = await this.http.request("POST", `/v1/workflows/${name}/runs`, body, {
      retryUntil: options.idempotencyKey !== undefined ? Date.now() + 30_000 : undefined,
    });
    const started = answer.body as Started;
    this.started.set(started.runId, name);
    return { runId: started.runId, status: started.status, created: started.created };
  }

  async signal(
    runId: number,
    event: string,
    payload?: unknown,
    options: { idempotencyKey?: string; workflow?: WorkflowRef } = {},
  ): Promise<SignalOutcome> {
    checkEventName(event);
    const text = toJson(payload === undefined ? {} : payload, "the signal's payload");
    const workflow = options.workflow ?? this.started.get(runId) ?? (await this.workflowOf(runId));
    const headers: Record<string, string> = {};
    if (options.idempotencyKey !== undefined) headers["Idempotency-Key"] = options.idempotencyKey;
    const answer = await this.http.request(
      "POST",
      `${runPath(workflow, runId)}/signals/${encodeURIComponent(event)}`,
      text,
      {
        headers,
        retryUntil: options.idempotencyKey !== undefined ? Date.now() + 30_000 : undefined,
      },
    );
    return answer.body as SignalOutcome;
  }

  /** The workflow of a run, found by a query over runs. */
  private async workflowOf(runId: number): Promise<string> {
    const q = encodeURIComponent(`runId = ${runId}`);
    const answer = await this.http.request("GET", `/v1/runs?query=${q}&limit=1`, undefined, {
      retryUntil: Date.now() + 10_000,
    });
    const run = answer.body?.runs?.[0];
    if (!run) {
      throw new NotFoundError(`no run ${runId}`, { status: 404 });
    }
    return run.workflow as string;
  }

  readonly runs = {
    get: async (workflow: WorkflowRef, runId: number): Promise<RunInfo> => {
      const answer = await this.http.request("GET", runPath(workflow, runId), undefined, {
        retryUntil: Date.now() + 10_000,
      });
      return answer.body as RunInfo;
    },

    cancel: async (workflow: WorkflowRef, runId: number): Promise<boolean> => {
      const answer = await this.http.request("DELETE", runPath(workflow, runId), undefined, {
        retryUntil: Date.now() + 10_000,
      });
      return Boolean(answer.body?.cancelled);
    },

    result: async <T = unknown>(
      workflow: WorkflowRef,
      runId: number,
      timeout: Duration = "60s",
    ): Promise<T> => {
      const end = Date.now() + millis(timeout, "timeout");
      let pause = 10;
      for (;;) {
        const run = await this.runs.get(workflow, runId);
        if (run.status === "completed") {
          return run.output as T;
        }
        if (run.status !== "running") {
          throw new RunFailedError(runId, run.status, run.error);
        }
        if (Date.now() >= end) {
          throw new WorkflowError(
            `run ${runId} of ${nameOf(workflow)} is still running after ${timeout}`,
          );
        }
        await sleep(pause);
        pause = Math.min(pause * 2, 250);
      }
    },
  };
}

