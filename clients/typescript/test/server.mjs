// Starts the real pgworkflows server jar, on its embedded PostgreSQL, for a test file: free ports,
// a scratch directory, a token with every scope. Nothing of the server is mocked.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, "../../..");
export const TOKEN = "ts-secret-token";

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

export async function startServer() {
  const jar = process.env.PGWORKFLOWS_SERVER_JAR ?? join(repo, "queue-server/target/queue-server.jar");
  if (!existsSync(jar)) {
    throw new Error(`no server jar at ${jar}: build it first (./mvnw install -DskipTests)`);
  }
  const dir = mkdtempSync(join(tmpdir(), "pgw-ts-"));
  const port = await freePort();
  const pgPort = await freePort();
  const proc = spawn("java", ["-jar", jar], {
    cwd: dir,
    env: {
      ...process.env,
      WORKFLOWS_PORT: String(port),
      WORKFLOWS_EMBEDDED_PG_PORT: String(pgPort),
      WORKFLOWS_API_TOKENS: `ts:admin,read,start,worker=${TOKEN}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  proc.stdout.on("data", (d) => (log = (log + d).slice(-20000)));
  proc.stderr.on("data", (d) => (log = (log + d).slice(-20000)));
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`the server exited (${proc.exitCode}):\n${log}`);
    }
    try {
      const r = await fetch(url + "/readyz");
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) {
      proc.kill("SIGKILL");
      throw new Error(`the server was not ready in 120 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    token: TOKEN,
    dir,
    get log() {
      return log;
    },
    /** A raw call to the server, for what the SDK does not offer. */
    async api(method, path, body) {
      const r = await fetch(url + path, {
        method,
        headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    },
    async stop() {
      proc.kill("SIGTERM");
      await new Promise((ok) => {
        if (proc.exitCode !== null) return ok();
        const t = setTimeout(() => {
          proc.kill("SIGKILL");
          ok();
        }, 20_000);
        proc.once("exit", () => {
          clearTimeout(t);
          ok();
        });
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls {@code f} until it answers truthy, or fails after {@code ms}. */
export async function eventually(f, ms = 30_000, what = "the condition") {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what} did not hold within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
