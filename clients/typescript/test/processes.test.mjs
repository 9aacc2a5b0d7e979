// TypeScript workers in processes of their own: one SIGKILLed in the middle of a step leaves its
// run to another, which finishes it with one journal row per step; one sent SIGTERM finishes the
// step it is in, hands the run back and exits.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { createWorkflowClient } from "../dist/index.js";
import { eventually, startServer } from "./server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
let server;
let client;
const children = [];

before(async () => {
  server = await startServer();
  client = createWorkflowClient({ url: server.url, token: server.token });
});

after(async () => {
  for (const c of children) c.kill("SIGKILL");
  await server?.stop();
});

function worker(marks, env = {}) {
  const p = spawn(process.execPath, [join(here, "fixtures/killable-worker.mjs")], {
    env: { ...process.env, WORKFLOWS_URL: server.url, WORKFLOWS_TOKEN: server.token, MARKS: marks, ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.push(p);
  return p;
}

function marks(file) {
  try {
    return readFileSync(file, "utf8").trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function exited(p) {
  return new Promise((ok) => (p.exitCode !== null || p.signalCode !== null ? ok() : p.once("exit", ok)));
}

test("a worker SIGKILLed in a step leaves its run to another, one journal row per step", { timeout: 90_000 }, async () => {
  const file = join(mkdtempSync(join(tmpdir(), "pgw-ts-kill-")), "marks");
  writeFileSync(file, "");
  const first = worker(file);
  const { runId } = await client.start("ts-killable", 4);
  await eventually(() => marks(file).some((m) => m.startsWith("slow-start")), 30_000, "the slow step");
  first.kill("SIGKILL");
  await exited(first);
  // The second worker's slow step is quick; it takes the run once the first's lease runs out.
  const second = worker(file, { SLOW_MS: "10" });
  assert.equal(await client.runs.result("ts-killable", runId, "60s"), 42);
  const rows = (await server.api("GET", `/v1/workflows/ts-killable/runs/${runId}/steps`)).body.steps;
  assert.deepEqual(rows.map((s) => s.name), ["first", "slow", "last"]);
  // "first" was journaled before the kill: it ran once; "slow" began twice and ended once.
  const m = marks(file);
  assert.equal(m.filter((x) => x.startsWith("first")).length, 1);
  assert.equal(m.filter((x) => x.startsWith("slow-start")).length, 2);
  assert.deepEqual(m.filter((x) => x.startsWith("slow-end")), [`slow-end ${second.pid}`]);
  second.kill("SIGTERM");
  await exited(second);
});

test("a worker sent SIGTERM finishes its step, hands the run back and exits", { timeout: 90_000 }, async () => {
  const file = join(mkdtempSync(join(tmpdir(), "pgw-ts-term-")), "marks");
  writeFileSync(file, "");
  const first = worker(file, { SLOW_MS: "1500", LEASE_SECONDS: "30" });
  const { runId } = await client.start("ts-killable", 5);
  await eventually(() => marks(file).some((m) => m.startsWith("slow-start")), 30_000, "the slow step");
  first.kill("SIGTERM");
  await exited(first);
  assert.equal(first.exitCode, 0);
  assert.ok(marks(file).includes(`slow-end ${first.pid}`), "the step in progress finished");
  // Handed back at once (not left to its 30 s lease): another worker finishes the run.
  const second = worker(file, { SLOW_MS: "10" });
  assert.equal(await client.runs.result("ts-killable", runId, "20s"), 52);
  const rows = (await server.api("GET", `/v1/workflows/ts-killable/runs/${runId}/steps`)).body.steps;
  assert.deepEqual(rows.map((s) => s.name), ["first", "slow", "last"]);
  assert.equal(marks(file).filter((x) => x.startsWith("slow-start")).length, 1);
  second.kill("SIGTERM");
  await exited(second);
});
