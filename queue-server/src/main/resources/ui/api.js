// Calls to the server's API with the bearer token of this browser tab.
//
// The token lives in sessionStorage: it is gone when the tab closes, and other tabs sign in on
// their own. A server without tokens (loopback only) accepts any bearer token, so until someone
// signs in the page sends a placeholder; a server that wants a real one answers 401 and the page
// shows its sign-in form.

const KEY = "pgworkflows.token";
const PLACEHOLDER = "dashboard";

export function token() {
  return sessionStorage.getItem(KEY);
}

export function signIn(value) {
  sessionStorage.setItem(KEY, value);
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

/** An answer other than 2xx, with the problem+json title and detail when the server sent one. */
export class ApiError extends Error {
  constructor(status, title, detail, field) {
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.field = field;
  }
}

const listeners = new Set();

/** Calls fn() whenever the server refuses the token (401). */
export function onUnauthorized(fn) {
  listeners.add(fn);
}

/**
 * Sends a request and answers the parsed JSON body (null for an empty one). body, when given, is
 * sent as JSON; options.headers adds headers. Throws ApiError for a status outside 2xx.
 */
export async function call(method, path, body, options = {}) {
  const headers = { Authorization: `Bearer ${token() || PLACEHOLDER}`, ...(options.headers || {}) };
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "Server unreachable", String(e.message || e));
  }
  const text = await response.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!response.ok) {
    if (response.status === 401) {
      listeners.forEach((fn) => fn());
    }
    const title = (json && json.title) || response.statusText || `HTTP ${response.status}`;
    const detail = (json && json.detail) || (json ? "" : text.slice(0, 300));
    throw new ApiError(response.status, title, detail, json && json.field);
  }
  return json;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
export const del = (path) => call("DELETE", path);

/** Path segment encoding for names taken from the page. */
export const seg = (s) => encodeURIComponent(String(s));

/** The base path of a workflow's routes. */
export const wf = (name) => `/v1/workflows/${seg(name)}`;

/** The base path of a run's routes. */
export const run = (name, id) => `${wf(name)}/runs/${seg(id)}`;
