import { ConflictError, type JournalError } from "./errors.js";
import { type Transport } from "./http.js";

/** A task as a poll hands it out (the protocol's Task). */
export interface Task {
  runId: number;
  messageId: number;
  receipt: string;
  attempt: number;
  version: number;
  reason: string;
  input: unknown;
  journal: JournalEntry[] | null;
  startedAt: string;
  traceContext?: string;
  stepOptions?: Record<string, unknown>;
}

/** One journal row. */
export interface JournalEntry {
  name: string;
  kind: string;
  output?: unknown;
  error?: JournalError;
  timedOut?: boolean;
  /** The run state changes journaled with the row: key to value, null removing the key. */
  state?: Record<string, unknown> | null;
}

/** A step row to journal. */
export interface StepRow {
  name: string;
  kind: string;
  output?: unknown;
  error?: JournalError;
  startedAt?: string;
  state?: Record<string, unknown>;
}

/**
 * A leased task and the writes about it: each presents the lease, keeps the receipt current and
 * is repeated while the server cannot be reached, until the lease would have run out (the
 * protocol lets a write be sent twice: the second changes nothing).
 */
export class Lease {
  private receipt: string;
  private expiresAt: number;
  private heartbeat?: NodeJS.Timeout;
  /** Fired when the lease is lost: the run was cancelled or ended, or another worker has it. */
  readonly lost = new AbortController();
  /**
   * The writes and extensions, one at a time: an extension changes the receipt, so a write sent
   * beside one would present the old receipt and be answered stale.
   */
  private queue: Promise<unknown> = Promise.resolve();

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const next = this.queue.then(f, f);
    this.queue = next.catch(() => undefined);
    return next;
  }

  constructor(
    private readonly http: Transport,
    private readonly path: string,
    readonly task: Task,
    private readonly leaseSeconds: number,
    private readonly headers: Record<string, string>,
  ) {
    this.receipt = task.receipt;
    this.expiresAt = Date.now() + leaseSeconds * 1000;
  }

  private body(extra: Record<string, unknown>): Record<string, unknown> {
    return { messageId: this.task.messageId, receipt: this.receipt, ...extra };
  }

  private async write(route: string, extra: Record<string, unknown>): Promise<any> {
    const answer = await this.serial(() =>
      this.http.request("POST", this.path + route, this.body(extra), {
        retryUntil: this.expiresAt,
        headers: this.headers,
      }),
    );
    const outcome = answer.body?.outcome;
    if (outcome === "stale" || outcome === "not_running" || outcome === "duplicate") {
      this.lost.abort(outcome);
    }
    return answer.body;
  }

  /** Extends the lease every third of it while the task is held, until {@link stop}. */
  startHeartbeat(): void {
    const every = Math.max(1000, (this.leaseSeconds * 1000) / 3);
    this.heartbeat = setInterval(() => {
      void this.extend().catch(() => undefined);
    }, every);
    this.heartbeat.unref();
  }

  stop(): void {
    if (this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }

  private async extend(): Promise<void> {
    try {
      const answer = await this.serial(() =>
        this.http.request(
          "POST",
          this.path + "/lease",
          this.body({ leaseSeconds: this.leaseSeconds }),
          { retryUntil: this.expiresAt, headers: this.headers },
        ),
      );
      this.receipt = answer.body.receipt;
      this.expiresAt = Date.now() + this.leaseSeconds * 1000;
    } catch (e) {
      if (e instanceof ConflictError) {
        this.stop();
        this.lost.abort("lease lost");
      }
      throw e;
    }
  }

  /** Journals run steps under the lease, which carries on: ok, or stale, not_running. */
  async journal(steps: StepRow[]): Promise<string> {
    return (await this.write("/steps", { steps })).outcome;
  }

  /** Completes the task: a step with a next (a sleep, a wait) or a result that ends the run. */
  async complete(fields: Record<string, unknown>): Promise<string> {
    const answer = await this.write("/complete", fields);
    this.stop();
    return answer.outcome;
  }

  /** Hands the task back, due after {@code delayMs}; {@code step} failed with {@code error}. */
  async retry(delayMs: number, step?: string, error?: JournalError): Promise<string> {
    const extra: Record<string, unknown> = { delayMs };
    if (step !== undefined) extra.step = step;
    if (error !== undefined) extra.error = error;
    const answer = await this.write("/retry", extra);
    this.stop();
    return answer.outcome;
  }

  /** Ends the run and starts its successor with {@code input}. */
  async continueAsNew(input: unknown): Promise<string> {
    const answer = await this.write("/continue-as-new", { input });
    this.stop();
    return answer.outcome;
  }

  /** Starts the child run of step {@code step} once: a repeat answers the same run. */
  async startChild(fields: Record<string, unknown>): Promise<{ runId: number; created: boolean }> {
    const answer = await this.serial(() =>
      this.http.request("POST", this.path + "/children", fields, {
        retryUntil: this.expiresAt,
        headers: this.headers,
      }),
    );
    return answer.body;
  }

  /** Refuses the pending updates of an update task: this worker has no update handlers. */
  async refuseUpdates(): Promise<void> {
    const taken = await this.http.request("POST", this.path + "/update-task", this.body({}), {
      retryUntil: this.expiresAt,
      headers: this.headers,
      accept: [409],
    });
    const updates: Array<{ updateId: number }> = taken.body?.updates ?? [];
    if (taken.status !== 200) {
      return;
    }
    await this.write("/update-answers", {
      answers: updates.map((u) => ({
        updateId: u.updateId,
        status: "refused",
        error: { type: "NoHandler", message: "this TypeScript worker has no update handlers" },
      })),
    });
    this.stop();
  }
}
