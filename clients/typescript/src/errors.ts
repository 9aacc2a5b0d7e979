/**
 * The errors the SDK throws. Every one is a {@link WorkflowError}; those that come from a server's
 * answer carry its HTTP status and its problem document's detail.
 */

/** The base of every error the SDK throws. */
export class WorkflowError extends Error {
  /** The HTTP status of the answer that caused it, when a server answered. */
  readonly status?: number;
  /** The server's problem detail, or the SDK's own explanation. */
  readonly detail: string;
  /** The request field the server named as the cause (`field` of its problem document). */
  readonly field?: string;

  constructor(message: string, options: { status?: number; field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
    this.detail = message;
    this.field = options.field;
  }
}

/** A 400: the request was refused for its input (the detail names the field); nothing changed. */
export class InvalidRequestError extends WorkflowError {}

/** A 401 or 403: no token, a wrong one, or one without the scope the route needs. */
export class NotAuthorizedError extends WorkflowError {}

/** A 404: the workflow, run or route does not exist. */
export class NotFoundError extends WorkflowError {}

/** A 409: the call conflicts with the state of what it names (a run that has ended, say). */
export class ConflictError extends WorkflowError {}

/**
 * The server could not be reached, or answered 5xx. Calls the protocol lets the SDK repeat were
 * repeated until their deadline before this was thrown.
 */
export class ServerUnavailableError extends WorkflowError {}

/** A value that cannot be sent as JSON: a workflow's input, a step's output, a payload. */
export class NotSerializableError extends WorkflowError {}

/** A step failed for good (its attempts spent): raised into the body at the step's call. */
export class StepFailedError extends WorkflowError {
  /** The step's name. */
  readonly step: string;
  /** The error the step's last attempt failed with, as journaled. */
  readonly error: JournalError;

  constructor(step: string, error: JournalError) {
    super(`step ${step} failed: ${error.type}: ${error.message}`);
    this.step = step;
    this.error = error;
  }
}

/** A step's attempt ran past its timeout; retried like any failure. */
export class StepTimeoutError extends WorkflowError {}

/** A run the caller waited for failed, was cancelled or timed out. */
export class RunFailedError extends WorkflowError {
  readonly runId: number;
  readonly runStatus: string;
  readonly error?: JournalError;

  constructor(runId: number, runStatus: string, error?: JournalError) {
    super(
      `run ${runId} ${runStatus}` + (error ? `: ${error.type}: ${error.message}` : ""),
    );
    this.runId = runId;
    this.runStatus = runStatus;
    this.error = error;
  }
}

/** A child run a step started ended without completing. */
export class ChildFailedError extends WorkflowError {
  readonly runId: number;
  readonly workflow: string;
  readonly runStatus: string;

  constructor(workflow: string, runId: number, runStatus: string, error?: JournalError) {
    super(
      `child run ${runId} of ${workflow} ${runStatus}` +
        (error ? `: ${error.type}: ${error.message}` : ""),
    );
    this.runId = runId;
    this.workflow = workflow;
    this.runStatus = runStatus;
  }
}

/** The body did not reach the steps its journal holds, in their kinds: it is not deterministic. */
export class NonDeterministicWorkflowError extends WorkflowError {}

/** A task of a version this worker does not serve (the design's WorkflowVersionMismatch). */
export class WorkflowVersionMismatch extends WorkflowError {
  readonly expected: number;
  readonly got: number;

  constructor(expected: number, got: number) {
    super(`this worker serves version ${expected}; the task is of version ${got}`);
    this.expected = expected;
    this.got = got;
  }
}

/** An error as the journal and a run's result keep it. */
export interface JournalError {
  type: string;
  message: string;
  stack?: string;
  step?: string;
  [field: string]: unknown;
}

/** The journal's shape of a thrown value. */
export function journalError(e: unknown, step?: string): JournalError {
  const out: JournalError =
    e instanceof Error
      ? { type: e.name || "Error", message: e.message || String(e) }
      : { type: typeof e, message: safeString(e) };
  if (e instanceof Error && typeof e.stack === "string") {
    out.stack = e.stack.length > 8000 ? e.stack.slice(0, 8000) : e.stack;
  }
  if (step !== undefined) {
    out.step = step;
  }
  return out;
}

function safeString(v: unknown): string {
  try {
    return typeof v === "string" ? v : JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
