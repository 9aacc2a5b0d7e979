import { hostname } from "node:os";
import {
  InvalidRequestError,
  ServerUnavailableError,
  WorkflowVersionMismatch,
  journalError,
} from "./errors.js";
import { type ServerOptions, Transport, sleep } from "./http.js";
import { Lease, type Task } from "./lease.js";
import { Execution } from "./replay.js";
import { type Workflow } from "./workflow.js";

/** How a worker runs; every field optional. */
export interface WorkerOptions {
  /** Runs held at once (default 16). */
  concurrency?: number;
  /** Each task's lease, extended every third while a step runs (default 60 s). */
  leaseSeconds?: number;
  /** A closing worker waits this long for its runs to reach a step boundary (default 30 s). */
  shutdownGraceMs?: number;
  /**
   * How long a poll waits for tasks (default 10 s). A closing worker lets its poll return (the
   * server would still hand an abandoned poll the tasks that come due) and hands back what it
   * brings, so closing takes up to this long.
   */
  pollSeconds?: number;
  /**
   * How tasks come: "stream" (default), a task stream the server writes tasks to as they come due,
   * for the slots the worker reports free; or "poll", long polls.
   */
  intake?: "stream" | "poll";
  /** Close on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
  /** Told of errors the worker keeps going through (the server away, a run's write refused). */
  onError?: (error: unknown) => void;
}

let workers = 0;

/**
 * Takes a workflow's tasks from the server by long polls and runs each: replays its body against
 * its journal and runs the next new step. Closing it stops taking tasks and hands each run back at
 * its next step boundary.
 */
export class Worker {
  readonly id: string;
  private readonly http: Transport;
  private readonly path: string;
  private readonly concurrency: number;
  private readonly leaseSeconds: number;
  private readonly headers: Record<string, string>;
  private readonly active = new Set<Promise<void>>();
  private readonly pollSeconds: number;
  private stopping = false;
  private loop!: Promise<void>;
  /** The open task stream: its id, the tasks read from it, and the last report's number. */
  private stream?: { id: string; seen: number };
  private reports = 0;
  private readonly onSignal = () => void this.close();

  private constructor(
    private readonly definition: Workflow<any, any>,
    private readonly options: ServerOptions & WorkerOptions,
  ) {
    this.http = new Transport(options);
    this.path = `/v1/workflows/${definition.name}`;
    this.concurrency = options.concurrency ?? 16;
    this.leaseSeconds = options.leaseSeconds ?? 60;
    this.pollSeconds = options.pollSeconds ?? 10;
    if (!Number.isInteger(this.pollSeconds) || this.pollSeconds < 0 || this.pollSeconds > 30) {
      throw new InvalidRequestError(`pollSeconds must be 0 to 30, got ${this.pollSeconds}`, {
        field: "pollSeconds",
      });
    }
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1 || this.concurrency > 100) {
      throw new InvalidRequestError(`concurrency must be 1 to 100, got ${this.concurrency}`, {
        field: "concurrency",
      });
    }
    if (!Number.isInteger(this.leaseSeconds) || this.leaseSeconds < 3 || this.leaseSeconds > 43200) {
      throw new InvalidRequestError(`leaseSeconds must be 3 to 43200, got ${this.leaseSeconds}`, {
        field: "leaseSeconds",
      });
    }
    this.id = `${hostname()}-${process.pid}-ts${++workers}`;
    this.headers = {
      "X-Worker-Id": this.id,
      "X-Worker-Host": hostname(),
      "X-Worker-Slots": String(this.concurrency),
    };
  }

  static start(definition: Workflow<any, any>, options: ServerOptions & WorkerOptions): Worker {
    const w = new Worker(definition, options);
    w.loop = (options.intake ?? "stream") === "stream" ? w.streamLoop() : w.pollLoop();
    if (options.handleSignals ?? true) {
      process.once("SIGTERM", w.onSignal);
      process.once("SIGINT", w.onSignal);
    }
    return w;
  }

  /** Runs held now. */
  get running(): number {
    return this.active.size;
  }

  private failed(e: unknown): void {
    this.options.onError?.(e);
  }

  private async pollLoop(): Promise<void> {
    let pause = 100;
    while (!this.stopping) {
      const free = this.concurrency - this.active.size;
      if (free <= 0) {
        await Promise.race(this.active);
        continue;
      }
      let tasks: Task[];
      try {
        const answer = await this.http.request(
          "POST",
          `${this.path}/tasks/poll`,
          {
            versions: [this.definition.version],
            max: free,
            waitSeconds: this.pollSeconds,
            leaseSeconds: this.leaseSeconds,
          },
          { headers: this.headers },
        );
        tasks = answer.body?.tasks ?? [];
        pause = 100;
      } catch (e) {
        if (this.stopping) {
          break;
        }
        this.failed(e);
        await sleep(pause);
        pause = Math.min(pause * 2, 5000);
        continue;
      }
      for (const task of tasks) {
        this.take(task);
      }
    }
  }

  /** A task a closing worker's last poll brought: due again at once, for another worker. */
  private async handBack(task: Task): Promise<void> {
    try {
      await new Lease(this.http, `${this.path}/runs/${task.runId}`, task, this.leaseSeconds, this.headers).retry(0);
    } catch (e) {
      this.failed(e);
    }
  }

  /** Starts a task's run (or hands it back when closing), tracked among the active ones. */
  private take(task: Task): void {
    const done: Promise<void> = (this.stopping ? this.handBack(task) : this.runTask(task)).finally(
      () => {
        this.active.delete(done);
        this.reportSlots();
      },
    );
    this.active.add(done);
  }

  /**
   * Tells the stream how many tasks this worker read from it and how many slots are free now: the
   * stream sends at most that many more. Reports are numbered; a late one is ignored.
   */
  private reportSlots(): void {
    const stream = this.stream;
    if (!stream) {
      return;
    }
    const free = Math.max(0, this.concurrency - this.active.size);
    const header = `${stream.id} ${++this.reports} ${stream.seen} ${free}`;
    void this.http
      .request("POST", `${this.path}/tasks/stream/${encodeURIComponent(stream.id)}/slots`, undefined, {
        headers: { ...this.headers, "Task-Stream-Slots": header },
        accept: [404],
      })
      .catch((e) => this.failed(e));
  }

  /**
   * Opens task streams one after another (each lasts up to 30 s) and runs the tasks they bring;
   * a closing worker ends its stream, and hands back what the stream still writes.
   */
  private async streamLoop(): Promise<void> {
    let pause = 100;
    while (!this.stopping) {
      try {
        const res = await fetch(`${this.http.url}${this.path}/tasks/stream`, {
          method: "POST",
          headers: {
            ...this.headers,
            ...this.http.authorization(),
            "Content-Type": "application/json",
            Accept: "application/x-ndjson",
          },
          body: JSON.stringify({
            versions: [this.definition.version],
            slots: this.concurrency,
            seconds: 30,
            leaseSeconds: this.leaseSeconds,
          }),
        });
        if (res.status !== 200 || !res.body) {
          throw new ServerUnavailableError(
            `the task stream was refused: ${res.status} ${(await res.text()).slice(0, 200)}`,
            { status: res.status },
          );
        }
        pause = 100;
        const decoder = new TextDecoder();
        let buffered = "";
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffered += decoder.decode(chunk, { stream: true });
          let newline: number;
          while ((newline = buffered.indexOf("\n")) >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line.length === 0) {
              continue;
            }
            const message = JSON.parse(line);
            if (typeof message.stream === "string") {
              this.stream = { id: message.stream, seen: 0 };
              if (this.stopping) {
                void this.endStream();
              }
              this.reportSlots();
            } else if (Array.isArray(message.tasks) && this.stream) {
              this.stream.seen += message.tasks.length;
              for (const task of message.tasks as Task[]) {
                this.take(task);
              }
              this.reportSlots();
            }
          }
        }
      } catch (e) {
        if (this.stopping) {
          break;
        }
        this.failed(e);
        await sleep(pause);
        pause = Math.min(pause * 2, 5000);
      } finally {
        this.stream = undefined;
      }
    }
  }

  /** Ends the open stream: the server writes what it holds, and hands back what comes later. */
  private async endStream(): Promise<void> {
    const stream = this.stream;
    if (!stream) {
      return;
    }
    try {
      await this.http.request(
        "DELETE",
        `${this.path}/tasks/stream/${encodeURIComponent(stream.id)}`,
        undefined,
        { headers: this.headers, accept: [404] },
      );
    } catch (e) {
      this.failed(e);
    }
  }

  private async runTask(task: Task): Promise<void> {
    const lease = new Lease(
      this.http,
      `${this.path}/runs/${task.runId}`,
      task,
      this.leaseSeconds,
      this.headers,
    );
    try {
      if (task.reason === "update") {
        await lease.refuseUpdates();
        return;
      }
      if (task.version !== this.definition.version) {
        this.failed(new WorkflowVersionMismatch(this.definition.version, task.version));
        await lease.retry(1000);
        return;
      }
      lease.startHeartbeat();
      const execution = new Execution(lease, this.definition.name, () => this.stopping);
      const outcome = await execution.execute(this.definition.body);
      if (outcome.kind !== "suspended" && !(await execution.beforeEnd())) {
        return;
      }
      if (outcome.kind === "completed") {
        let output: unknown;
        try {
          output = JSON.parse(JSON.stringify(outcome.output ?? null));
        } catch (e) {
          await lease.complete({ result: { status: "failed", error: journalError(e) } });
          return;
        }
        await lease.complete({ result: { status: "completed", output } });
      } else if (outcome.kind === "failed") {
        await lease.complete({ result: { status: "failed", error: outcome.error } });
      }
    } catch (e) {
      // The lease runs out and the task comes back: nothing acknowledged is lost.
      this.failed(e);
    } finally {
      lease.stop();
    }
  }

  /**
   * Stops taking tasks; each held run is handed back at its next step boundary (a step running
   * finishes first). Resolves once every run is done with, or after the grace period.
   */
  async close(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      process.removeListener("SIGTERM", this.onSignal);
      process.removeListener("SIGINT", this.onSignal);
      await this.endStream();
    }
    const grace = this.options.shutdownGraceMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([this.loop, ...this.active]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, grace);
      }),
    ]);
    // The grace timer must not hold a closing process open once the runs are done with.
    clearTimeout(timer);
  }
}
