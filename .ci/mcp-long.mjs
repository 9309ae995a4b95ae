// Long calls (issue 16) through the official TypeScript MCP client SDK,
// from .ci/node, against `dsh mcp` over stdio or `dsh serve` over
// streamable HTTP (already running at the URL given):
//   heartbeat  a quiet `sleep 4` completes under {timeout: 2000,
//              resetTimeoutOnProgress: true}, with strictly increasing
//              progress; so does a call whose user answers after 2.5 s;
//   yield      with yieldAfterMs 1000, a 3 s silent command returns the
//              exact yield text and its task ends with its output and exit
//              code; a yielded command that passes its timeout is killed
//              and its final read says so;
//   noyield    with background runs off, the same command stays in the
//              foreground;
//   cancel     after a cancel (the client's timeout), dsh sends no
//              response and no progress for that request, and the command
//              is killed.
// Usage: node .ci/mcp-long.mjs CASE stdio PATH/TO/dsh CONFIG WORKDIR
//        node .ci/mcp-long.mjs CASE http URL WORKDIR
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { inspect } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (p) => import(pathToFileURL(join(sdkDir, p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { CallToolResultSchema, ElicitRequestSchema } = await load("types.js");

const [kase, mode, target, ...rest] = process.argv.slice(2);
if (!((mode === "stdio" && rest.length === 2) || (mode === "http" && rest.length === 1))) {
  console.error("usage: node .ci/mcp-long.mjs CASE stdio PATH/TO/dsh CONFIG WORKDIR | CASE http URL WORKDIR");
  process.exit(2);
}
const workdir = rest[rest.length - 1];

const watchdog = setTimeout(() => {
  console.log(`FAIL  ${kase} ${mode}: watchdog: not done within 60s`);
  process.exit(1);
}, 60_000);

let failed = false;
const pass = (msg) => console.log(`PASS  ${kase} ${mode}: ${msg}`);
const fail = (msg, got) => {
  failed = true;
  console.log(`FAIL  ${kase} ${mode}: ${msg}`);
  if (got !== undefined) console.log(inspect(got, { depth: null }).replace(/^/gm, "      "));
};
const expect = (label, got, want) => (got === want ? pass(label) : fail(`${label}: want ${JSON.stringify(want)}`, got));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// connect opens a session; errors collects what the client reports on its
// error channel (an unexpected response or progress notification lands
// there); answer, when given, answers elicitations.
async function connect(answer) {
  const caps = answer ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: "dsh-ci-long", version: "1" }, { capabilities: caps });
  const errors = [];
  client.onerror = (e) => errors.push(String(e?.message ?? e));
  if (answer) client.setRequestHandler(ElicitRequestSchema, answer);
  const transport = mode === "stdio"
    ? new StdioClientTransport({ command: target, args: ["mcp", "--config", rest[0], "--workdir", workdir], stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
  await client.connect(transport);
  return { client, errors };
}

// call is a tools/call with the client's options; it returns the text,
// structuredContent and the progress notifications seen.
async function call(s, name, args, options = {}) {
  const progress = [];
  const res = await s.client.request(
    { method: "tools/call", params: { name, arguments: args } },
    CallToolResultSchema,
    { ...options, onprogress: (p) => progress.push(p) },
  );
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return { text, structured: res.structuredContent, isError: !!res.isError, progress };
}

const increasing = (ps) => ps.every((p, i) => i === 0 || p.progress > ps[i - 1].progress);
const yieldLine = (ms, id) => `[still running after ${ms}ms; continues as background task ${id}: read it with task_output, stop it with task_kill]`;
const short = { timeout: 2000, resetTimeoutOnProgress: true };

if (kase === "heartbeat") {
  const s = await connect(async () => { await sleep(2500); return { action: "accept", content: {} }; });
  const quiet = await call(s, "bash", { command: "sleep 4", description: "wait quietly" }, short);
  expect("sleep 4 completes under a 2 s timeout reset by progress", quiet.text, "(no output)");
  quiet.progress.length >= 3 ? pass(`${quiet.progress.length} heartbeats`) : fail("fewer than 3 heartbeats", quiet.progress);
  increasing(quiet.progress) ? pass("progress strictly increases") : fail("progress does not strictly increase", quiet.progress);
  expect("a heartbeat says how long it has run", quiet.progress[0]?.message, "running for 1s");
  // The config asks about `touch *`; the user takes 2.5 s to answer.
  const asked = await call(s, "bash", { command: "touch asked", description: "ask first" }, short);
  expect("a call survives a 2.5 s ask under a 2 s timeout", asked.text, "(no output)");
  expect("the asked command ran", existsSync(join(workdir, "asked")), true);
  expect("no client errors", s.errors.join("; "), "");
  await s.client.close();
}

if (kase === "yield") {
  const s = await connect(null);
  const y = await call(s, "bash", { command: "sleep 3; echo out; exit 5", description: "work quietly" }, short);
  expect("a 3 s silent command yields after 1 s", y.text, "(no output)\n" + yieldLine(1000, "bash-1"));
  expect("structuredContent.taskId", y.structured?.taskId, "bash-1");
  expect("structuredContent.yielded", y.structured?.yielded, true);
  const out = await call(s, "task_output", { task_id: "bash-1", wait: true, timeout_ms: 10000 }, { timeout: 20000 });
  expect("the task ends with its output and exit code", out.text, "out\n[status: completed, exit code: 5]");
  const late = await call(s, "bash", { command: "sleep 30", description: "too slow", timeoutMs: 2500 }, short);
  expect("a command past its timeout yields first", late.text, "(no output)\n" + yieldLine(1000, "bash-2"));
  const killed = await call(s, "task_output", { task_id: "bash-2", wait: true, timeout_ms: 10000 }, { timeout: 20000 });
  expect("its timeout kills the task", killed.text, "[timed out after 2500ms]\n[status: killed, timed out after 2500ms]");
  expect("no client errors", s.errors.join("; "), "");
  await s.client.close();
}

if (kase === "noyield") {
  const s = await connect(null);
  const res = await call(s, "bash", { command: "sleep 2; echo done", description: "work quietly" }, { timeout: 20000 });
  expect("background runs off: the call stays in the foreground", res.text, "done\n");
  expect("no taskId", res.structured?.taskId, undefined);
  await s.client.close();
}

if (kase === "cancel") {
  const s = await connect(null);
  let err = null;
  try {
    await call(s, "bash", { command: `echo started; sleep 2; touch cancel-marker`, description: "cancelled" }, { timeout: 700 });
  } catch (e) {
    err = e;
  }
  expect("the client gave up after its timeout", err?.message?.includes("timed out"), true);
  await sleep(2500); // time for any stray response, and for the command to have touched its marker
  expect("no response nor progress after the cancel", s.errors.join("; "), "");
  expect("the cancelled command was killed", existsSync(join(workdir, "cancel-marker")), false);
  const next = await call(s, "bash", { command: "echo next", description: "go on" }, { timeout: 10000 });
  expect("the session goes on", next.text, "next\n");
  await s.client.close();
}

clearTimeout(watchdog);
process.exit(failed ? 1 : 0);
