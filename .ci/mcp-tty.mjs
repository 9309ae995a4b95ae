// Interactive tasks (issue 29) through the official TypeScript MCP client
// SDK, from .ci/node, against `dsh mcp` over stdio with its default config
// (the sandbox on where a backend works):
//   python    `python3 -q` with tty: print(6*7) + Enter, waitFor "42";
//   bash      `bash -i`: read -p answered; C-c interrupts sleep 100;
//   less      a 1000-line file: the screen shows the first page, PageDown
//             the next;
//   refusals  input to a task without a terminal, an unknown key.
// Usage: node .ci/mcp-tty.mjs PATH/TO/dsh WORKDIR
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { inspect } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (p) => import(pathToFileURL(join(sdkDir, p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const [bin, workdir] = process.argv.slice(2);
const watchdog = setTimeout(() => {
  console.log("FAIL  watchdog: not done within 90s");
  process.exit(1);
}, 90_000);

let failed = false;
const pass = (msg) => console.log(`PASS  ${msg}`);
const fail = (msg, got) => {
  failed = true;
  console.log(`FAIL  ${msg}`);
  if (got !== undefined) console.log(inspect(got, { depth: null }).replace(/^/gm, "      "));
};
const check = (label, ok, got) => (ok ? pass(label) : fail(label, got));

const client = new Client({ name: "dsh-ci-tty", version: "1" });
await client.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--workdir", workdir], stderr: "ignore" }));
const call = async (name, args) => {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  return { text: res.content?.[0]?.text ?? "", isError: !!res.isError };
};
const start = async (command) => {
  const { text } = await call("bash", { command, description: "interactive", run_in_background: true, tty: true });
  const id = text.replace(/^started background task /, "");
  if (id === text) throw new Error(`start ${command}: ${text}`);
  return id;
};
const wait = 10_000;

// python
{
  const id = await start("python3 -q");
  await call("task_output", { task_id: id, waitFor: ">>> $", timeout_ms: wait });
  const t0 = performance.now();
  const r = await call("task_input", { task_id: id, text: "print(6*7)", keys: ["Enter"], waitFor: "(?m)^42", timeout_ms: wait });
  const ms = performance.now() - t0;
  check(`python: print(6*7) answered 42 in ${ms.toFixed(0)} ms`, r.text.includes("42") && r.text.endsWith("[status: running]"), r);
  await call("task_kill", { task_id: id });
}

// bash
{
  const id = await start("bash --norc --noprofile -i");
  await call("task_input", { task_id: id, text: 'read -p "name? " n; echo "hi $n"', keys: ["Enter"], waitFor: "name\\? $", timeout_ms: wait });
  const r = await call("task_input", { task_id: id, text: "dsh", keys: ["Enter"], waitFor: "hi dsh", timeout_ms: wait });
  check("bash: read -p answered", r.text.includes("hi dsh"), r);
  await call("task_input", { task_id: id, text: "sleep 100", keys: ["Enter"] });
  await call("task_input", { task_id: id, keys: ["C-c"] });
  const alive = await call("task_input", { task_id: id, text: "echo alive", keys: ["Enter"], waitFor: "(?m)^alive", timeout_ms: wait });
  check("bash: C-c interrupted sleep 100", alive.text.includes("alive") && !alive.text.includes("[waitFor: no match"), alive);
  await call("task_kill", { task_id: id });
}

// less
{
  writeFileSync(join(workdir, "lines.txt"), Array.from({ length: 1000 }, (_, i) => `line ${i + 1}\n`).join(""));
  const id = await start("less lines.txt");
  const first = await call("task_output", { task_id: id, screen: true, waitFor: "(?m)^line 23$", timeout_ms: wait });
  check("less: the first page", first.text.startsWith("line 1\nline 2\n") && !first.text.includes("line 24\n"), first);
  await call("task_input", { task_id: id, keys: ["PageDown"] });
  const next = await call("task_output", { task_id: id, screen: true, waitFor: "(?m)^line 46$", timeout_ms: wait });
  check("less: PageDown shows the next page", next.text.startsWith("line 24\n"), next);
  await call("task_input", { task_id: id, text: "q" });

  // refusals
  const plain = await call("bash", { command: "sleep 30", description: "plain", run_in_background: true });
  const plainId = plain.text.replace(/^started background task /, "");
  const noTerm = await call("task_input", { task_id: plainId, text: "x" });
  check("refused: a task without a terminal", noTerm.isError && noTerm.text === `Error: task ${plainId} has no terminal: only a bash task started with tty: true takes input`, noTerm);
  await call("task_kill", { task_id: plainId });
}

await client.close();
clearTimeout(watchdog);
if (failed) {
  console.log("== interactive tasks: FAILED");
  process.exit(1);
}
console.log("== interactive tasks: all passed");
