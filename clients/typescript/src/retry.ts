import { type Duration, millis } from "./duration.js";
import { InvalidRequestError } from "./errors.js";

/** How a failing step is retried (the design's shape). */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 3). */
  attempts?: number;
  backoff?: {
    /** fixed: base each time; linear: base × n; exp: base × 2^(n-1) (default exp). */
    kind?: "fixed" | "linear" | "exp";
    /** Default "1s". */
    base?: Duration;
    /** The longest wait (default "60s"). */
    max?: Duration;
    /** ± this share of randomness (default 0.2). */
    jitter?: number;
  };
  /** Each attempt's limit: one running longer fails with a StepTimeoutError (default none). */
  timeout?: Duration;
  /** Whether an error may be retried at all (default: every error may). */
  retryable?: (error: unknown) => boolean;
}

/** A policy with every field decided. */
export interface Policy {
  attempts: number;
  kind: "fixed" | "linear" | "exp";
  baseMs: number;
  maxMs: number;
  jitter: number;
  timeoutMs?: number;
  retryable: (error: unknown) => boolean;
}

/** The design's default: 3 attempts, exponential from 1 s to 60 s, 20 % jitter, no timeout. */
export function policyOf(retry: RetryPolicy | undefined): Policy {
  const r = retry ?? {};
  const attempts = r.attempts ?? 3;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 1000) {
    throw new InvalidRequestError(`retry.attempts must be a whole number from 1 to 1000, got ${attempts}`, {
      field: "retry.attempts",
    });
  }
  const kind = r.backoff?.kind ?? "exp";
  if (kind !== "fixed" && kind !== "linear" && kind !== "exp") {
    throw new InvalidRequestError(`retry.backoff.kind must be fixed, linear or exp, got ${kind}`, {
      field: "retry.backoff.kind",
    });
  }
  const baseMs = millis(r.backoff?.base ?? "1s", "retry.backoff.base");
  const maxMs = Math.max(baseMs, millis(r.backoff?.max ?? "60s", "retry.backoff.max"));
  const jitter = r.backoff?.jitter ?? 0.2;
  if (!(jitter >= 0 && jitter <= 1)) {
    throw new InvalidRequestError(`retry.backoff.jitter must be from 0 to 1, got ${jitter}`, {
      field: "retry.backoff.jitter",
    });
  }
  const timeoutMs = r.timeout === undefined ? undefined : millis(r.timeout, "retry.timeout");
  return { attempts, kind, baseMs, maxMs, jitter, timeoutMs, retryable: r.retryable ?? (() => true) };
}

/**
 * The policy with an operator's options for this run's step applied over it (a task's
 * stepOptions naming the step): each option given replaces the code's.
 */
export function withOperatorOptions(p: Policy, options: any, step: string): Policy {
  if (!options || typeof options !== "object" || options.step !== step) {
    return p;
  }
  const kinds: Record<string, Policy["kind"]> = { fixed: "fixed", linear: "linear", exponential: "exp" };
  const out: Policy = { ...p };
  if (Number.isInteger(options.attempts)) out.attempts = Math.max(1, options.attempts);
  if (typeof options.backoff === "string" && kinds[options.backoff]) out.kind = kinds[options.backoff]!;
  if (Number.isFinite(options.baseMs)) out.baseMs = options.baseMs;
  if (Number.isFinite(options.maxMs)) out.maxMs = options.maxMs;
  if (Number.isFinite(options.timeoutMs)) out.timeoutMs = options.timeoutMs;
  out.maxMs = Math.max(out.maxMs, out.baseMs);
  return out;
}

/** The wait before attempt {@code attempt + 1}, after attempt {@code attempt} (from 1) failed. */
export function delayAfter(p: Policy, attempt: number): number {
  let d: number;
  if (p.kind === "fixed") {
    d = p.baseMs;
  } else if (p.kind === "linear") {
    d = p.baseMs * attempt;
  } else {
    d = p.baseMs * 2 ** Math.min(attempt - 1, 40);
  }
  d = Math.min(d, p.maxMs);
  if (p.jitter > 0) {
    d = d * (1 - p.jitter + Math.random() * 2 * p.jitter);
  }
  return Math.max(0, Math.round(d));
}
