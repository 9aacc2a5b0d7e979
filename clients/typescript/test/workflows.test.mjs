// Workflows defined, served and started in TypeScript against the real server jar: the design's
// verbs, retries, waits, cancellation, parallel steps, children, journaled values, continue-as-new.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  ConflictError,
  RunFailedError,
  StepFailedError,
  createWorkflowClient,
  workflow,
} from "../dist/index.js";
import { eventually, startServer } from "./server.mjs";

let server;
let client;
const workers = [];

before(async () => {
  server = await startServer();
  client = createWorkflowClient({ url: server.url, token: server.token });
});

after(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await server?.stop();
});

function serve(def, options = {}) {
  const w = def.serve({ url: server.url, token: server.token, handleSignals: false, pollSeconds: 1, ...options });
  workers.push(w);
  return w;
}

async function steps(name, runId) {
  const r = await server.api("GET", `/v1/workflows/${name}/runs/${runId}/steps`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.steps;
}

test("the design's onboarding workflow runs to its end, each step journaled once", { timeout: 60_000 }, async () => {
  const sent = [];
  const onboardUser = workflow({
    name: "onboard-user",
    version: 1,
    retention: "30d",
    run: async (ctx, input) => {
      const user = await ctx.step.run("create-user", () => ({ id: 42, email: input.email }));
      await ctx.step.sleep("welcome-delay", "200ms");
      await ctx.step.run("send-welcome", () => sent.push(user.id), {
        retry: { attempts: 5, backoff: { kind: "exp", base: "2s" } },
      });
      const verified = await ctx.step.waitForEvent("verify", {
        match: { userId: user.id },
        timeout: "7d",
      });
      if (!verified) {
        await ctx.step.run("nudge", () => "nudged");
      }
      return user.id;
    },
  });
  serve(onboardUser);
  const { runId, created } = await client.start("onboard-user", { email: "a@b.c" });
  assert.equal(created, true);
  await eventually(async () => (await client.runs.get(onboardUser, runId)).waitingFor, 30_000, "the wait");
  // A payload that does not match is buffered; the matching one ends the wait.
  assert.equal((await client.signal(runId, "verify", { userId: 7 })).outcome, "buffered");
  assert.equal((await client.signal(runId, "verify", { userId: 42 })).outcome, "delivered");
  assert.equal(await client.runs.result(onboardUser, runId, "30s"), 42);
  const { status, output } = await client.runs.get("onboard-user", runId);
  assert.deepEqual([status, output], ["completed", 42]);
  assert.deepEqual(sent, [42]);
  assert.deepEqual(
    (await steps("onboard-user", runId)).map((s) => `${s.name}:${s.kind}`),
    ["create-user:run", "welcome-delay:sleep", "send-welcome:run", "verify:wait"],
  );
  assert.equal((await client.runs.get(onboardUser, runId)).retentionDays, 30);
});

test("a failing step is retried after its backoff and journaled once, with its attempts", { timeout: 60_000 }, async () => {
  let calls = 0;
  const flaky = workflow({
    name: "ts-flaky",
    run: async (ctx) =>
      ctx.step.run(
        "charge",
        ({ attempt }) => {
          calls++;
          if (attempt < 3) throw new Error(`declined on attempt ${attempt}`);
          return `charged on attempt ${attempt}`;
        },
        { retry: { attempts: 3, backoff: { kind: "fixed", base: "100ms", jitter: 0 } } },
      ),
  });
  serve(flaky);
  const { runId } = await client.start(flaky, null);
  assert.equal(await client.runs.result(flaky, runId, "30s"), "charged on attempt 3");
  assert.equal(calls, 3);
  const rows = await steps("ts-flaky", runId);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].attempts, 3);
});

test("a step out of attempts fails the run with its error, which the body may catch first", { timeout: 60_000 }, async () => {
  const failing = workflow({
    name: "ts-failing",
    run: async (ctx, input) => {
      try {
        await ctx.step.run(
          "call",
          () => {
            throw new TypeError("the gateway is down");
          },
          { retry: { attempts: 2, backoff: { kind: "fixed", base: "50ms" } } },
        );
      } catch (e) {
        if (input.compensate && e instanceof StepFailedError) {
          return ctx.step.run("compensate", () => `compensated ${e.step}: ${e.error.message}`);
        }
        throw e;
      }
      return "unreachable";
    },
  });
  serve(failing);
  const failed = await client.start(failing, { compensate: false });
  await assert.rejects(client.runs.result(failing, failed.runId, "30s"), (e) => {
    assert.ok(e instanceof RunFailedError);
    assert.equal(e.runStatus, "failed");
    assert.equal(e.error.type, "StepFailedError");
    assert.equal(e.error.step, "call");
    assert.match(e.error.message, /TypeError: the gateway is down/);
    return true;
  });
  const rows = await steps("ts-failing", failed.runId);
  assert.equal(rows[0].error.type, "TypeError");
  assert.equal(rows[0].attempts, 2);

  const saved = await client.start(failing, { compensate: true });
  assert.equal(
    await client.runs.result(failing, saved.runId, "30s"),
    "compensated call: the gateway is down",
  );
});

test("a wait whose timeout passes answers null; an idempotent start answers the same run", { timeout: 60_000 }, async () => {
  const waiting = workflow({
    name: "ts-timeout",
    run: async (ctx) => {
      const got = await ctx.step.waitForEvent("approval", { event: "approved", timeout: "300ms" });
      return got === null ? "timed out" : got;
    },
  });
  serve(waiting);
  const first = await client.start(waiting, 1, { idempotencyKey: "order-7" });
  const again = await client.start(waiting, 2, { idempotencyKey: "order-7" });
  assert.equal(again.runId, first.runId);
  assert.equal(again.created, false);
  assert.equal(await client.runs.result(waiting, first.runId, "30s"), "timed out");
  const rows = await steps("ts-timeout", first.runId);
  assert.equal(rows[0].timedOut, true);
});

test("a cancel aborts the signal of the step running, and the run ends cancelled", { timeout: 60_000 }, async () => {
  let aborted = false;
  let started = false;
  const slow = workflow({
    name: "ts-cancel",
    run: async (ctx) =>
      ctx.step.run("long-call", ({ signal }) =>
        new Promise((resolve) => {
          started = true;
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve("stopped");
          });
        }),
      ),
  });
  serve(slow, { leaseSeconds: 3, intake: "poll" });
  const { runId } = await client.start(slow, null);
  await eventually(() => started, 30_000, "the step's start");
  assert.equal(await client.runs.cancel(slow, runId), true);
  await eventually(() => aborted, 10_000, "the step's abort");
  assert.equal((await client.runs.get(slow, runId)).status, "cancelled");
  await assert.rejects(client.signal(runId, "anything", {}), ConflictError);
});

test("parallel steps are journaled once each; now() and randomUUID() stay the same on replay", { timeout: 60_000 }, async () => {
  const seen = [];
  const fanout = workflow({
    name: "ts-parallel",
    run: async (ctx, n) => {
      const parts = await Promise.all(
        Array.from({ length: n }, (_, i) => ctx.step.run(`part-${i}`, async () => i * i)),
      );
      const at = await ctx.now();
      const id = await ctx.randomUUID();
      seen.push([at.toISOString(), id]);
      await ctx.step.sleep("pause", 100);
      seen.push([(await ctx.now()).toISOString(), await ctx.randomUUID()]);
      return { sum: parts.reduce((a, b) => a + b, 0), at: at.toISOString(), id };
    },
  });
  serve(fanout);
  const { runId } = await client.start(fanout, 5);
  const out = await client.runs.result(fanout, runId, "30s");
  assert.equal(out.sum, 0 + 1 + 4 + 9 + 16);
  // The first execution's values, the replay's (the same), and the replay's second pair (new).
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[1], seen[0]);
  assert.notEqual(seen[2][1], seen[0][1]);
  assert.deepEqual([out.at, out.id], seen[0]);
  const names = (await steps("ts-parallel", runId)).map((s) => s.name);
  assert.deepEqual(names.filter((n) => n.startsWith("part-")).sort(), ["part-0", "part-1", "part-2", "part-3", "part-4"]);
  assert.equal(new Set(names).size, names.length);
});

test("a child run's output returns to its parent, and continue-as-new starts a successor", { timeout: 60_000 }, async () => {
  const child = workflow({
    name: "ts-child",
    run: async (ctx, n) => ctx.step.run("double", () => n * 2),
  });
  const parent = workflow({
    name: "ts-parent",
    run: async (ctx, n) => {
      const doubled = await ctx.step.invoke("double-it", child, n);
      if (doubled < 20) {
        return ctx.continueAsNew(doubled);
      }
      return doubled;
    },
  });
  serve(child);
  serve(parent);
  const { runId } = await client.start(parent, 3);
  const first = await eventually(async () => {
    const r = await client.runs.get(parent, runId);
    return r.status === "running" ? null : r;
  });
  assert.equal(first.status, "completed");
  assert.ok(first.continuedTo > runId);
  // 3 -> 6 -> 12 -> 24: three runs in the chain, the last completing with 24.
  const chain = await eventually(async () => {
    const c = (await server.api("GET", `/v1/workflows/ts-parent/runs/${runId}/chain`)).body.runs;
    return c.length === 3 && c[2].status === "completed" ? c : null;
  });
  assert.equal(await client.runs.result(parent, chain[2].runId, "30s"), 24);
});

test("the run's state goes with its rows, reads the same on replay and is seen from outside", { timeout: 60_000 }, async () => {
  const reads = [];
  const counted = workflow({
    name: "ts-state",
    run: async (ctx, n) => {
      ctx.state.set("phase", "counting");
      const total = await ctx.step.run("count", () => n * 3);
      ctx.state.set("total", total);
      await ctx.step.sleep("settle", 50);
      reads.push([ctx.state.get("phase"), ctx.state.get("total")]);
      ctx.state.set("phase", "waiting");
      const arms = await ctx.step.waitForAny("decision", [
        { event: "approve", match: { total } },
        { event: "reject" },
      ]);
      ctx.state.set("phase", arms[0] ? "approved" : "rejected");
      ctx.state.delete("total");
      return ctx.state.all();
    },
  });
  serve(counted);
  const { runId } = await client.start(counted, 4);
  const waiting = await eventually(async () => {
    const s = (await server.api("GET", `/v1/workflows/ts-state/runs/${runId}/state`)).body;
    return s?.state?.phase === "waiting" ? s : null;
  });
  assert.equal(waiting.state.total, 12);
  await client.signal(runId, "approve", { total: 12 });
  assert.deepEqual(await client.runs.result(counted, runId, "30s"), { phase: "approved" });
  // After the sleep, and again on the replay after the signal, the body read the same.
  assert.deepEqual(reads, [["counting", 12], ["counting", 12]]);
  const final = (await server.api("GET", `/v1/workflows/ts-state/runs/${runId}/state`)).body.state;
  assert.deepEqual(final, { phase: "approved" });
});
