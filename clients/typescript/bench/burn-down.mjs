// Burn-down of a Node worker against a Java worker on one server (the server jar, its embedded
// PostgreSQL with fsync on): N runs of ten trivial steps, started at once, each worker holding 16
// runs; steps per second from the first start to the last completion. Alternates Java and Node
// rounds. node bench/burn-down.mjs [runs] [rounds]; needs the server and examples jars built.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createWorkflowClient, workflow } from "../dist/index.js";
import { repo, startServer } from "../test/server.mjs";

const runs = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 2);
const server = await startServer();
const client = createWorkflowClient({ url: server.url, token: server.token });

const burn = workflow({
  name: "ts-burn",
  run: async (ctx, n) => {
    let v = n;
    for (let i = 0; i < 10; i++) {
      const before = v;
      v = await ctx.step.run(`s${i}`, () => before + 1);
    }
    return v;
  },
});

const jar = process.env.PGWORKFLOWS_EXAMPLES_JAR ?? join(repo, "examples/target/pgworkflows-demo.jar");
const java = spawn("java", ["-cp", jar, "dev.pgworkflows.examples.Polyglot", "serve"], {
  env: { ...process.env, WORKFLOWS_URL: server.url, WORKFLOWS_TOKEN: server.token },
  stdio: ["pipe", "pipe", "inherit"],
});
await new Promise((ok) => java.stdout.on("data", (d) => String(d).includes("serving") && ok()));
const node = burn.serve({ url: server.url, token: server.token, concurrency: 16, handleSignals: false, pollSeconds: 1 });

async function round(name) {
  const t0 = performance.now();
  const ids = await Promise.all(Array.from({ length: runs }, (_, i) => client.start(name, i)));
  for (const { runId } of ids) {
    await client.runs.result(name, runId, "300s");
  }
  const s = (performance.now() - t0) / 1000;
  return { workflow: name, runs, steps: runs * 10, seconds: +s.toFixed(2), stepsPerSecond: Math.round((runs * 10) / s) };
}

// One warm-up round each, then the measured ones.
await round("java-burn");
await round("ts-burn");
const results = [];
for (let r = 0; r < rounds; r++) {
  results.push(await round("java-burn"));
  results.push(await round("ts-burn"));
}
console.log(JSON.stringify({ fsync: "on", cores: (await import("node:os")).availableParallelism(), node: process.version, results }, null, 1));
await node.close();
java.stdin.end();
await new Promise((ok) => java.once("exit", ok));
await server.stop();
