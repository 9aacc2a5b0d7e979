// The README's example, as printed: packed by npm pack, installed into a scratch project, compiled
// by tsc and run against the real server. The repository's README holds the
// same block, checked here too.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, test } from "node:test";
import { repo, startServer } from "./server.mjs";

const run = promisify(execFile);
const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
let server;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

/** The TypeScript block after the marker {@code <!-- example -->} of a page. */
function example(page) {
  const text = readFileSync(page, "utf8");
  const m = /<!-- example -->\n```ts\n([\s\S]*?)\n```/.exec(text);
  assert.ok(m, `${page} has an example block`);
  return m[1] + "\n";
}

test("the README's example runs as printed from the packed package", { timeout: 180_000 }, async () => {
  const block = example(join(pkg, "README.md"));
  assert.equal(example(join(repo, "README.md")), block, "the repository's README shows the same example");
  const dir = mkdtempSync(join(tmpdir(), "pgw-ts-readme-"));
  const { stdout: packed } = await run("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: pkg });
  const tarball = join(dir, packed.trim().split("\n").at(-1));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-example", private: true, type: "module" }));
  // The package's own TypeScript compiles the example: the tarball is all that is installed.
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        types: ["node"],
        typeRoots: [join(pkg, "node_modules/@types")],
      },
    }),
  );
  writeFileSync(join(dir, "example.ts"), block);
  await run("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], { cwd: dir, timeout: 120_000 });
  await run(process.execPath, [join(pkg, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: dir });
  const { stdout } = await run("node", ["example.js"], {
    cwd: dir,
    env: { ...process.env, QUEUE_URL: server.url, WORKFLOWS_TOKEN: server.token },
    timeout: 60_000,
  });
  assert.match(stdout, /welcome mail to a@b\.c/);
  assert.match(stdout, /run (\d+) is completed with user id 42; the keyed start made run \d+/);
  assert.doesNotMatch(stdout, /nudge/);
});
