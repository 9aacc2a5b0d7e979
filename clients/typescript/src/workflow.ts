import { type Duration, days } from "./duration.js";
import { InvalidRequestError } from "./errors.js";
import { type ServerOptions } from "./http.js";
import { checkWorkflowName } from "./names.js";
import { type WorkflowContext } from "./replay.js";
import { Worker, type WorkerOptions } from "./worker.js";

/** A workflow's definition: its name, version, retention and body. */
export interface WorkflowDefinition<I = any, O = unknown> {
  /** 1 to 43 of a-z, 0-9, "_" and "-". */
  name: string;
  /** The version this code is (default 1); runs keep the version they started with. */
  version?: number;
  /** How long a run is kept after it ends, such as "30d" (default: the server's 30 days). */
  retention?: Duration;
  /** The body: replayed from the top on every resume; side effects belong in steps. */
  run: (ctx: WorkflowContext, input: I) => Promise<O>;
}

/** A defined workflow: what a client names, and what a worker serves. */
export interface Workflow<I = any, O = unknown> {
  readonly name: string;
  readonly version: number;
  /** Whole days, when the definition set a retention. */
  readonly retentionDays?: number;
  readonly body: (ctx: WorkflowContext, input: I) => Promise<O>;
  /** Starts a worker that takes this workflow's tasks from the server and runs them. */
  serve(options?: ServerOptions & WorkerOptions): Worker;
}

/** Defines a workflow. */
export function workflow<I = any, O = unknown>(def: WorkflowDefinition<I, O>): Workflow<I, O> {
  if (!def || typeof def !== "object") {
    throw new InvalidRequestError("workflow() needs { name, run }", { field: "name" });
  }
  checkWorkflowName(def.name);
  const version = def.version ?? 1;
  if (!Number.isInteger(version) || version < 1) {
    throw new InvalidRequestError(`version must be a whole number from 1, got ${version}`, {
      field: "version",
    });
  }
  if (typeof def.run !== "function") {
    throw new InvalidRequestError(`workflow ${def.name} needs a run function`, { field: "run" });
  }
  const retentionDays = def.retention === undefined ? undefined : days(def.retention, "retention");
  const defined: Workflow<I, O> = {
    name: def.name,
    version,
    retentionDays,
    body: def.run,
    serve: (options = {}) => Worker.start(defined, options),
  };
  return Object.freeze(defined);
}
