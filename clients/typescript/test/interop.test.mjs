// TypeScript and Java on one server: a run the Java client starts is served by a TypeScript
// worker, a run the TypeScript client starts is served by a Java worker, and a TypeScript parent
// awaits a Java child. The Java side is examples' Polyglot, run from the examples jar.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { createWorkflowClient, workflow } from "../dist/index.js";
import { repo, startServer } from "./server.mjs";

const run = promisify(execFile);
const jar = process.env.PGWORKFLOWS_EXAMPLES_JAR ?? join(repo, "examples/target/pgworkflows-demo.jar");
let server;
let client;
let javaWorker;
const workers = [];

function java(...args) {
  return run("java", ["-cp", jar, "dev.pgworkflows.examples.Polyglot", ...args], {
    env: { ...process.env, WORKFLOWS_URL: server.url, WORKFLOWS_TOKEN: server.token },
    timeout: 90_000,
  });
}

before(async () => {
  assert.ok(existsSync(jar), `no examples jar at ${jar}: build it first (./mvnw install -DskipTests)`);
  server = await startServer();
  client = createWorkflowClient({ url: server.url, token: server.token });
  javaWorker = spawn("java", ["-cp", jar, "dev.pgworkflows.examples.Polyglot", "serve"], {
    env: { ...process.env, WORKFLOWS_URL: server.url, WORKFLOWS_TOKEN: server.token },
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise((ok, fail) => {
    javaWorker.stdout.on("data", (d) => String(d).includes("serving") && ok());
    javaWorker.once("exit", (code) => fail(new Error(`the Java worker exited: ${code}`)));
  });
});

after(async () => {
  await Promise.all(workers.map((w) => w.close()));
  javaWorker?.stdin.end();
  await new Promise((ok) => (javaWorker?.exitCode !== null ? ok() : javaWorker.once("exit", ok)));
  await server?.stop();
});

const greeter = workflow({
  name: "ts-greeter",
  run: async (ctx, input) => {
    const greeting = await ctx.step.run("greet", () => `Hello, ${input.name}`);
    return { greeting, by: "typescript" };
  },
});

test("a run the Java client starts is served by a TypeScript worker", { timeout: 90_000 }, async () => {
  workers.push(greeter.serve({ url: server.url, token: server.token, handleSignals: false, pollSeconds: 1 }));
  const { stdout } = await java("start", "ts-greeter", JSON.stringify({ name: "Ada" }));
  const runId = Number(stdout.trim());
  const awaited = await java("await", "ts-greeter", String(runId));
  assert.deepEqual(JSON.parse(awaited.stdout), { greeting: "Hello, Ada", by: "typescript" });
});

test("a run the TypeScript client starts is served by a Java worker", { timeout: 90_000 }, async () => {
  const { runId } = await client.start("java-invoice", { customer: "acme", amount: 100 });
  assert.deepEqual(await client.runs.result("java-invoice", runId, "60s"), {
    customer: "acme",
    total: 120,
    by: "java",
  });
});

test("a TypeScript parent awaits its Java child", { timeout: 90_000 }, async () => {
  const billing = workflow({
    name: "ts-billing",
    run: async (ctx, customer) => {
      const invoice = await ctx.step.invoke("invoice", "java-invoice", { customer, amount: 50 });
      return ctx.step.run("notify", () => `${invoice.customer} owes ${invoice.total} (priced by ${invoice.by})`);
    },
  });
  workers.push(billing.serve({ url: server.url, token: server.token, handleSignals: false, pollSeconds: 1 }));
  const { runId } = await client.start(billing, "globex");
  assert.equal(await client.runs.result(billing, runId, "60s"), "globex owes 60 (priced by java)");
  const children = await server.api("GET", `/v1/workflows/ts-billing/runs/${runId}?children=true`);
  assert.equal(children.status, 200);
});
