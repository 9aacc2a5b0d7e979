import {
  ConflictError,
  InvalidRequestError,
  NotAuthorizedError,
  NotFoundError,
  NotSerializableError,
  ServerUnavailableError,
  WorkflowError,
} from "./errors.js";

/** Where a server is and how to speak to it. */
export interface ServerOptions {
  /** The server's base URL, such as "http://localhost:7700". */
  url?: string;
  /** A bearer token (the server's WORKFLOWS_API_TOKENS); none on a server without tokens. */
  token?: string;
}

/** An answer of the server: its status and its JSON (null for none). */
export interface Answer {
  status: number;
  body: any;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /**
   * Repeat the request while the server cannot be reached or answers 5xx, until this time (epoch
   * ms): only for requests the protocol lets a caller repeat.
   */
  retryUntil?: number;
  /** Answers with these statuses are returned, not thrown. */
  accept?: number[];
  signal?: AbortSignal;
}

/** JSON text of a value, or a NotSerializableError naming what it is. */
export function toJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (e) {
    throw new NotSerializableError(`${what} cannot be sent as JSON: ${(e as Error).message}`, {
      cause: e,
    });
  }
  if (text === undefined) {
    throw new NotSerializableError(`${what} cannot be sent as JSON (a ${typeof value})`);
  }
  return text;
}

/** HTTP to one server: JSON in and out, problem documents turned into typed errors. */
export class Transport {
  readonly url: string;
  private readonly token?: string;

  constructor(options: ServerOptions = {}) {
    const url = options.url ?? process.env.WORKFLOWS_URL ?? "http://localhost:7700";
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidRequestError(`url "${url}" is not a URL`, { field: "url" });
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new InvalidRequestError(`url "${url}" must be http or https`, { field: "url" });
    }
    this.url = url.replace(/\/+$/, "");
    this.token = options.token ?? process.env.WORKFLOWS_TOKEN;
  }

  /** The Authorization header of this server's token; none without a token. */
  authorization(): Record<string, string> {
    return this.token ? { Authorization: `Bearer ${this.token}` } : {};
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
    if (this.token) {
      headers.Authorization = `Bearer ${this.token}`;
    }
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : toJson(body, "the request body");
      headers["Content-Type"] = "application/json";
    }
    let pause = 50;
    for (;;) {
      let res: Response;
      try {
        res = await fetch(this.url + path, {
          method,
          headers,
          body: payload,
          signal: options.signal,
        });
      } catch (e) {
        if (options.signal?.aborted) {
          throw e;
        }
        const err = new ServerUnavailableError(
          `the server at ${this.url} could not be reached: ${causeOf(e)}`,
          { cause: e },
        );
        if (options.retryUntil !== undefined && Date.now() + pause < options.retryUntil) {
          await sleep(pause);
          pause = Math.min(pause * 2, 2000);
          continue;
        }
        throw err;
      }
      const text = await res.text();
      let json: any = null;
      if (text.length > 0) {
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
      }
      if (res.status < 400 || options.accept?.includes(res.status)) {
        return { status: res.status, body: json };
      }
      const err = problem(res.status, json, text);
      if (
        err instanceof ServerUnavailableError &&
        options.retryUntil !== undefined &&
        Date.now() + pause < options.retryUntil
      ) {
        await sleep(pause);
        pause = Math.min(pause * 2, 2000);
        continue;
      }
      throw err;
    }
  }
}

/** The typed error of a refusal, with the problem document's detail and field. */
function problem(status: number, json: any, text: string): WorkflowError {
  const detail =
    json && typeof json.detail === "string"
      ? json.detail
      : `the server answered ${status}${text ? `: ${text.slice(0, 200)}` : ""}`;
  const options = { status, field: json && typeof json.field === "string" ? json.field : undefined };
  if (status === 400 || status === 413 || status === 422) {
    return new InvalidRequestError(detail, options);
  }
  if (status === 401 || status === 403) {
    return new NotAuthorizedError(detail, options);
  }
  if (status === 404) {
    return new NotFoundError(detail, options);
  }
  if (status === 409) {
    return new ConflictError(detail, options);
  }
  if (status >= 500) {
    return new ServerUnavailableError(detail, options);
  }
  return new WorkflowError(detail, options);
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message ?? String(e);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
