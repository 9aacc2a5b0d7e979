// Bad input and a troubled server: typed errors with the server's detail, nothing changed by a
// refusal, writes repeated where the protocol allows, nothing acknowledged lost.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { after, before, test } from "node:test";
import {
  InvalidRequestError,
  NotAuthorizedError,
  NotFoundError,
  NotSerializableError,
  RunFailedError,
  ServerUnavailableError,
  WorkflowError,
  createWorkflowClient,
  workflow,
} from "../dist/index.js";
import { freePort, startServer } from "./server.mjs";

let server;
let client;
const closers = [];

before(async () => {
  server = await startServer();
  client = createWorkflowClient({ url: server.url, token: server.token });
});

after(async () => {
  for (const c of closers) await c();
  await server?.stop();
});

/**
 * An HTTP proxy in front of the real server that answers 503 (a problem document) to the next
 * {@code failures[path pattern]} requests whose path matches, and passes everything else on.
 */
async function flakyProxy(failures) {
  const port = await freePort();
  const seen = [];
  const proxy = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    for (const f of failures) {
      if (f.count > 0 && f.pattern.test(req.url) && req.method === "POST") {
        f.count--;
        seen.push(req.url);
        res.writeHead(503, { "Content-Type": "application/problem+json" });
        res.end(JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, detail: "the database is restarting" }));
        return;
      }
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers["content-length"];
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const r = await fetch(server.url + req.url, { method: req.method, headers, body });
    res.writeHead(r.status, { "Content-Type": r.headers.get("content-type") ?? "application/json" });
    // Passed on as it comes: a task stream's lines must reach the worker as they are written.
    if (r.body) {
      Readable.fromWeb(r.body).pipe(res);
    } else {
      res.end();
    }
  });
  await new Promise((ok) => proxy.listen(port, "127.0.0.1", ok));
  closers.push(() => new Promise((ok) => {
    proxy.close(ok);
    proxy.closeAllConnections();
  }));
  return { url: `http://127.0.0.1:${port}`, seen };
}

async function runsOf(name) {
  const r = await server.api("GET", `/v1/workflows/${name}/runs`);
  return r.body.runs;
}

test("a workflow name the server refuses is an InvalidRequestError with its detail", { timeout: 30_000 }, async () => {
  await assert.rejects(client.start("Bad Name!", {}), (e) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.ok(e instanceof WorkflowError);
    assert.equal(e.status, 400);
    assert.match(e.detail, /workflow name must be 1 to 43 characters/);
    return true;
  });
  assert.throws(() => workflow({ name: "Bad Name!", run: async () => 1 }), InvalidRequestError);
});

test("an input that is not JSON is refused before anything is sent", { timeout: 30_000 }, async () => {
  await assert.rejects(client.start("ts-unsent", { n: 10n }), (e) => {
    assert.ok(e instanceof NotSerializableError);
    assert.match(e.message, /the run's input cannot be sent as JSON/);
    return true;
  });
  await assert.rejects(client.start("ts-unsent", undefined, { delay: "soon" }), InvalidRequestError);
  assert.deepEqual(await runsOf("ts-unsent"), []);
});

test("a step with a bad name or an output that is not JSON fails the run, saying why", { timeout: 60_000 }, async () => {
  const bad = workflow({
    name: "ts-bad-steps",
    run: async (ctx, which) =>
      which === "name"
        ? ctx.step.run("no spaces allowed", () => 1)
        : ctx.step.run("loop", () => {
            const o = {};
            o.self = o;
            return o;
          }, { retry: { attempts: 1 } }),
  });
  const w = bad.serve({ url: server.url, token: server.token, handleSignals: false, pollSeconds: 1 });
  closers.push(() => w.close());
  const named = await client.start(bad, "name");
  await assert.rejects(client.runs.result(bad, named.runId, "30s"), (e) => {
    assert.ok(e instanceof RunFailedError);
    assert.equal(e.error.type, "InvalidRequestError");
    assert.match(e.error.message, /step name "no spaces allowed" must be/);
    return true;
  });
  const looped = await client.start(bad, "loop");
  await assert.rejects(client.runs.result(bad, looped.runId, "30s"), (e) => {
    assert.match(e.error.message, /the output of step loop cannot be sent as JSON/);
    return true;
  });
});

test("no server, a wrong token, an unknown run: each its own error", { timeout: 30_000 }, async () => {
  const away = createWorkflowClient({ url: `http://127.0.0.1:${await freePort()}` });
  await assert.rejects(away.start("anything", {}), (e) => {
    assert.ok(e instanceof ServerUnavailableError);
    assert.match(e.message, /could not be reached/);
    return true;
  });
  const stranger = createWorkflowClient({ url: server.url, token: "not-a-token" });
  await assert.rejects(stranger.start("anything", {}), NotAuthorizedError);
  await assert.rejects(client.runs.get("anything", 987654), NotFoundError);
});

test("503s are repeated for keyed starts and a worker's writes; an unkeyed start reports them", { timeout: 90_000 }, async () => {
  const proxy = await flakyProxy([
    { pattern: /\/v1\/workflows\/ts-flaky-server\/runs$/, count: 3 },
    { pattern: /\/runs\/\d+\/(steps|complete)$/, count: 4 },
  ]);
  const viaProxy = createWorkflowClient({ url: proxy.url, token: server.token });
  // Without a key a start may not be repeated: the caller gets the server's detail.
  await assert.rejects(viaProxy.start("ts-flaky-server", 1), (e) => {
    assert.ok(e instanceof ServerUnavailableError);
    assert.equal(e.status, 503);
    assert.equal(e.detail, "the database is restarting");
    return true;
  });
  // With a key it is repeated through the rest of the 503s: one run.
  const { runId, created } = await viaProxy.start("ts-flaky-server", 1, { idempotencyKey: "k-1" });
  assert.equal(created, true);
  assert.equal((await runsOf("ts-flaky-server")).length, 1);

  let ran = 0;
  const def = workflow({
    name: "ts-flaky-server",
    run: async (ctx, n) => {
      const a = await ctx.step.run("a", () => (ran++, n + 1));
      return ctx.step.run("b", () => a + 1);
    },
  });
  const w = def.serve({ url: proxy.url, token: server.token, handleSignals: false, pollSeconds: 1 });
  closers.push(() => w.close());
  assert.equal(await client.runs.result(def, runId, "60s"), 3);
  assert.equal(ran, 1);
  const rows = (await server.api("GET", `/v1/workflows/ts-flaky-server/runs/${runId}/steps`)).body.steps;
  assert.deepEqual(rows.map((s) => s.name), ["a", "b"]);
  assert.ok(proxy.seen.some((u) => /\/steps$/.test(u)), "a journal write met a 503");
});
