import { InvalidRequestError } from "./errors.js";

/** A duration: milliseconds, or text such as "500ms", "2s", "5m", "1h30m", "7d", "2w". */
export type Duration = number | string;

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** The milliseconds of {@code d}; an InvalidRequestError naming {@code field} when it is not one. */
export function millis(d: Duration, field: string): number {
  if (typeof d === "number") {
    if (!Number.isFinite(d) || d < 0) {
      throw new InvalidRequestError(`${field} must be zero or more milliseconds, got ${d}`, {
        field,
      });
    }
    return Math.round(d);
  }
  if (typeof d !== "string") {
    throw new InvalidRequestError(`${field} must be milliseconds or text such as "5m"`, { field });
  }
  const text = d.trim();
  const part = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/gy;
  let total = 0;
  let at = 0;
  let parts = 0;
  for (let m = part.exec(text); m !== null; m = part.exec(text)) {
    total += Number(m[1]) * UNITS[m[2] as string]!;
    at = part.lastIndex;
    parts++;
  }
  if (parts === 0 || at !== text.length) {
    throw new InvalidRequestError(
      `${field} "${d}" is not a duration: use a number with ms, s, m, h, d or w, such as "5m" or "1h30m"`,
      { field },
    );
  }
  return Math.round(total);
}

/** Whole days of a retention such as "30d"; a number is days already. */
export function days(d: Duration, field: string): number {
  if (typeof d === "number") {
    if (!Number.isInteger(d) || d < 1) {
      throw new InvalidRequestError(`${field} must be a whole number of days, got ${d}`, { field });
    }
    return d;
  }
  const ms = millis(d, field);
  const n = ms / UNITS.d!;
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidRequestError(`${field} "${d}" must be whole days, such as "30d"`, { field });
  }
  return n;
}
